#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""images/k8s/examples/stock-image.yaml as a namespace under OpenShift's restricted-v2 SCC runs it.

restricted-v2 gives every pod a uid from the namespace's range (here 1000680000), no runAsGroup (so the
process's group is 0, the image has no passwd entry for the uid) and an fsGroup from the same range, drops
every capability and allows no additions. So this sets, on both pods: runAsUser UID, runAsNonRoot,
fsGroup UID; on every container: capabilities.drop [ALL] with no add (the example adds SETUID, SETGID and
SYS_CHROOT for a root sshd); the Secret's defaultMode 0440 (the fsGroup reads it, 0400 would leave it
root's); the pods' k8s-agent/pod-security annotation "restricted". The worker's root file system is made
writable only where --writable-worker-root says so: k8s-agent-sshd appends the uid's passwd entry to the
image's group-writable /etc/passwd. Images: --image for the user's, --delivery for the init container's.

Usage: any_uid_example.py IN OUT --uid UID --image REF --delivery REF [--writable-worker-root]
Fails (exit 1, what changed) when the example no longer has the shape this edits.
"""

import argparse
import sys

import yaml


def edit_pod(spec, a, worker):
    security = spec.setdefault("securityContext", {})
    security.update({"runAsUser": a.uid, "runAsNonRoot": True, "fsGroup": a.uid})
    for container in spec.get("initContainers", []) + spec["containers"]:
        if container["image"] == "registry.example.com/my-training:1.0":
            container["image"] = a.image
        elif container["image"].split(":")[0] == "k8s-agent":  # the delivery image, any tag
            container["image"] = a.delivery
        else:
            sys.exit(f"any_uid_example.py: unexpected image {container['image']}")
        caps = container.setdefault("securityContext", {}).setdefault("capabilities", {})
        caps.pop("add", None)
        if caps.get("drop") != ["ALL"]:
            sys.exit(f"any_uid_example.py: container {container['name']} does not drop ALL")
    if worker and a.writable_worker_root:
        (main,) = [c for c in spec["containers"] if c["name"] == "worker"]
        main["securityContext"]["readOnlyRootFilesystem"] = False
    (secret,) = [v for v in spec["volumes"] if "secret" in v]
    secret["secret"]["defaultMode"] = 0o440


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--uid", type=int, required=True)
    ap.add_argument("--image", required=True)
    ap.add_argument("--delivery", required=True)
    ap.add_argument("--writable-worker-root", action="store_true")
    a = ap.parse_args()
    with open(a.input) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    kinds = {d["kind"]: d for d in docs}
    if set(kinds) != {"Service", "StatefulSet", "Job"}:
        sys.exit(f"any_uid_example.py: expected a Service, a StatefulSet and a Job, not {sorted(kinds)}")
    for kind in ("StatefulSet", "Job"):
        template = kinds[kind]["spec"]["template"]
        template["metadata"].setdefault("annotations", {})["k8s-agent/pod-security"] = "restricted"
        edit_pod(template["spec"], a, worker=kind == "StatefulSet")
    with open(a.output, "w") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False)


if __name__ == "__main__":
    main()
