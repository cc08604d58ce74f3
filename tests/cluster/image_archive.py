#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a one-layer docker-archive image (what `ctr images import` and `podman load` read) from a directory.

The cluster tier's node has no registry: its pause image (busybox's sleep) and the stock worker image (a
Debian 13 minbase root with Open MPI and no OpenSSH) are made from directories on this machine. Entries are
sorted and owned by their numeric ids, so the same directory makes the same bytes.

usage: image_archive.py ROOTFS NAME:TAG OUT.tar [--entrypoint JSON] [--cmd JSON] [--env K=V]...
                        [--also NAME:TAG --chmod PATH=MODE...]

--also writes a second image into the same archive: the same layer plus one more that holds each --chmod
PATH (relative to ROOTFS) with MODE, e.g. an image whose /etc/passwd is group-writable as OpenShift-style
images make it. The big layer is written and imported once.
"""
import argparse
import hashlib
import io
import json
import os
import tarfile


def layer_bytes(root):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(dirnames) + sorted(filenames):
                path = os.path.join(dirpath, name)
                info = tar.gettarinfo(path, os.path.relpath(path, root))
                info.uname = info.gname = ""
                if info.isreg():
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
    return buf.getvalue()


def mode_layer_bytes(root, chmods):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, mode in sorted(chmods.items()):
            path = os.path.join(root, rel)
            info = tar.gettarinfo(path, rel)
            info.uname = info.gname = ""
            info.mode = mode
            with open(path, "rb") as f:
                tar.addfile(info, f)
    return buf.getvalue()


def image_config(a, diff_ids):
    config = {"architecture": "amd64", "os": "linux", "created": "1970-01-01T00:00:00Z",
              "config": {"Env": a.env, "Entrypoint": a.entrypoint, "Cmd": a.cmd},
              "rootfs": {"type": "layers", "diff_ids": diff_ids},
              "history": [{"created_by": "image_archive.py"} for _ in diff_ids]}
    config_bytes = json.dumps(config, sort_keys=True).encode()
    return hashlib.sha256(config_bytes).hexdigest() + ".json", config_bytes


def chmod_arg(text):
    path, _, mode = text.partition("=")
    if not path or not mode:
        raise argparse.ArgumentTypeError(f"--chmod {text!r}: expected PATH=OCTAL_MODE")
    return path.lstrip("/"), int(mode, 8)


def add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rootfs")
    ap.add_argument("ref")
    ap.add_argument("out")
    ap.add_argument("--entrypoint", type=json.loads)
    ap.add_argument("--cmd", type=json.loads)
    ap.add_argument("--env", action="append", default=["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
    ap.add_argument("--also")
    ap.add_argument("--chmod", action="append", type=chmod_arg, default=[])
    a = ap.parse_args()
    if bool(a.also) != bool(a.chmod):
        ap.error("--also and --chmod go together")
    layer = layer_bytes(a.rootfs)
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    config_name, config_bytes = image_config(a, [diff_id])
    manifest = [{"Config": config_name, "RepoTags": [a.ref], "Layers": ["layer.tar"]}]
    with tarfile.open(a.out, "w", format=tarfile.PAX_FORMAT) as tar:
        add(tar, "layer.tar", layer)
        add(tar, config_name, config_bytes)
        if a.also:
            modes = mode_layer_bytes(a.rootfs, dict(a.chmod))
            modes_id = "sha256:" + hashlib.sha256(modes).hexdigest()
            also_name, also_bytes = image_config(a, [diff_id, modes_id])
            add(tar, "modes.tar", modes)
            add(tar, also_name, also_bytes)
            manifest.append({"Config": also_name, "RepoTags": [a.also], "Layers": ["layer.tar", "modes.tar"]})
        add(tar, "manifest.json", json.dumps(manifest).encode())
    print(f"{a.ref}: {len(layer) / 1e6:.1f} MB layer, {diff_id[:19]}")


if __name__ == "__main__":
    main()
