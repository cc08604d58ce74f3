#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the release's SBOM (SPDX 2.3 JSON) and gathers the licence texts
of everything linked into the binary statically.

usage: sbom.py BINARY THIRD_PARTY_PREFIX OUT_SBOM LICENSES_DIR
               [ARCH [SSHD_ENTRY SSHD_DIR]]

With SSHD_ENTRY (k8s-agent-sshd) and SSHD_DIR (scripts/sshd_build.sh's
install dir), the document also covers the workers' side the delivery
image carries: the entry, and OpenSSH's sshd, sshd-session and sshd-auth
with the libraries linked into them statically (their versions from the
build machine's -dev packages, or from the pinned ones sshd_build.sh
unpacked into SSHD_DIR: OpenSSL on both arches, all of them for aarch64;
OpenSSH's from the build's pin). The sshd's OpenSSL must be the agent's
(one pin, scripts/lib/bookworm_debs.sh): a mismatch is an error.

The components and their versions come from the binary's own --version
("linked: OpenSSL 3.0.19, libssh2 1.11.1, ...") and its source package from
where it was built: libssh2 and curl from the Debian 13 source packages
scripts/third_party.sh keeps beside its build (THIRD_PARTY_PREFIX/share/
sources), OpenSSL from the pinned Debian 12 libssl-dev it unpacked into the
prefix (share/debs.txt), the rest from the Debian 12 -dev packages of the
build machine (dpkg). The document's date is the commit's, so the same commit gives the
same SBOM.

ARCH aarch64 (default x86_64): the cross-built binaries, the agent run under
qemu-user for its --version; the arm64 -dev packages are those
third_party.sh (and sshd_build.sh) unpacked into the prefix (share/debs.txt,
share/doc/PACKAGE/copyright), libstdc++ the cross toolchain's
(libstdc++-N-dev-arm64-cross).
"""

import datetime
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile

# name in --version -> (SPDX id, -dev package or None for a source package
# kept by third_party.sh, its source package, declared licence)
COMPONENTS = [
    ("OpenSSL", "openssl", "libssl-dev", "Apache-2.0"),
    ("libssh2", "libssh2", None, "BSD-3-Clause"),
    ("libcurl", "curl", None, "curl"),
    ("nghttp2", "nghttp2", "libnghttp2-dev", "MIT"),
    ("yaml-cpp", "yaml-cpp", "libyaml-cpp-dev", "MIT"),
]


def dpkg_source(package):
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${source:Package} ${source:Version}",
         package], check=True, capture_output=True, text=True).stdout
    name, version = out.split()
    return name, version


def kept_source(prefix, source):
    """(version, debian tarball) of a source package third_party.sh kept."""
    dscs = glob.glob(os.path.join(prefix, "share", "sources",
                                  source + "_*.dsc"))
    if len(dscs) != 1:
        raise SystemExit("sbom: expected one %s .dsc in %s/share/sources, "
                         "found %d" % (source, prefix, len(dscs)))
    version = os.path.basename(dscs[0])[len(source) + 1:-len(".dsc")]
    debian = glob.glob(os.path.join(prefix, "share", "sources",
                                    source + "_" + version + ".debian.tar.*"))
    return version, debian[0] if debian else None


def copyright_from_debian_tarball(path):
    with tarfile.open(path) as t:
        return t.extractfile("debian/copyright").read()


def utc(iso):
    """"2026-12-02T06:12:18+01:00" -> "2026-12-02T05:12:18Z" (SPDX's form)."""
    try:
        t = datetime.datetime.fromisoformat(iso)
    except ValueError:
        return "1970-01-01T00:00:00Z"  # An unknown commit date.
    return t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# How each architecture's binary is run here, its C++ compiler and the
# package of the libstdc++ it links.
RUNNERS = {"x86_64": [],
           "aarch64": ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu"]}
CXX = {"x86_64": "g++", "aarch64": "aarch64-linux-gnu-g++"}
LIBSTDCXX = {"x86_64": "libstdc++-%s-dev",
             "aarch64": "libstdc++-%s-dev-arm64-cross"}


def prefix_source(prefix, package):
    """(source, source version) of a pinned -dev package unpacked into the
    prefix by third_party.sh or sshd_build.sh, from its share/debs.txt, or
    None when it names no such package."""
    path = os.path.join(prefix, "share", "debs.txt")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 4 and fields[0] == package:
                return fields[2], fields[3]
    return None


def dev_source(dev, prefix, host_ok):
    """(source, source version, copyright text) of a Debian 12 -dev package:
    the pinned one unpacked into `prefix` when its share/debs.txt names it,
    else (when `host_ok`: a native build) the build machine's (dpkg). Exits
    when it is neither, or when its copyright file is missing."""
    pinned = prefix_source(prefix, dev)
    if pinned is not None:
        source, deb_version = pinned
        path = os.path.join(prefix, "share", "doc", dev, "copyright")
    elif host_ok:
        source, deb_version = dpkg_source(dev)
        path = "/usr/share/doc/%s/copyright" % dev
    else:
        raise SystemExit("sbom: %s/share/debs.txt names no %s" % (prefix, dev))
    if not os.path.exists(path):
        raise SystemExit("sbom: no copyright file for " + source)
    with open(path, "rb") as f:
        return source, deb_version, f.read()


def linked_versions(binary, arch="x86_64"):
    out = subprocess.run(RUNNERS[arch] + [binary, "--version"], check=True,
                         capture_output=True, text=True).stdout
    lines = out.splitlines()
    version = lines[0].split()[1]
    commit = date = ""
    linked = {}
    for line in lines[1:]:
        m = re.match(r"commit (\S+) \((.*)\)$", line)
        if m:
            commit, date = m.groups()
        if line.startswith("linked: "):
            for item in line[len("linked: "):].split(", "):
                name, _, ver = item.partition(" ")
                linked[name] = ver
    return version, commit, date, linked


# What scripts/sshd_build.sh links into the sshd binaries statically besides
# OpenSSL (the agent's component, the same -dev package): (name, -dev
# package, declared licence).
SSHD_LINKED = [
    ("zlib", "zlib1g-dev", "Zlib"),
    ("libxcrypt", "libcrypt-dev", "LGPL-2.1-or-later"),
]
SSHD_BINARIES = ["sshd", "sshd-session", "sshd-auth"]


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def own_package(spdx_id, name, version, commit, path):
    """The SPDX package of one of this project's binaries, with its checksum."""
    return {
        "SPDXID": spdx_id, "name": name,
        "versionInfo": version, "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False, "licenseConcluded": "Apache-2.0",
        "licenseDeclared": "Apache-2.0", "copyrightText": "NOASSERTION",
        "sourceInfo": "built from commit " + commit,
        "checksums": [{"algorithm": "SHA256",
                       "checksumValue": sha256_of(path)}],
    }


def dev_component(spdx_id, name, dev, licence, licenses, prefix, host_ok):
    """An SPDX package for a Debian 12 -dev package's static library
    (dev_source), its copyright file copied into `licenses`."""
    source, deb_version, text = dev_source(dev, prefix, host_ok)
    with open(os.path.join(licenses, source + ".copyright"), "wb") as out:
        out.write(text)
    return {
        "SPDXID": spdx_id, "name": name,
        "versionInfo": deb_version.split(":")[-1].split("-")[0],
        "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
        "licenseConcluded": licence, "licenseDeclared": licence,
        "copyrightText": "see licenses/%s.copyright" % source,
        "sourceInfo": "Debian source package %s %s" % (source, deb_version),
        "externalRefs": [{
            "referenceCategory": "PACKAGE-MANAGER",
            "referenceType": "purl",
            "referenceLocator": "pkg:deb/debian/%s@%s?arch=source"
                                % (source, deb_version)}],
    }


def worker_side(entry, sshd_dir, version, commit, licenses, arch):
    """Packages and relationships for k8s-agent-sshd and the portable sshd."""
    with open(os.path.join(sshd_dir, ".k8s-agent-portable-sshd-stamp")) as f:
        pin = f.read().split()[0].split("=", 1)[1]  # "openssh=1:10.0p1-..."
    with open(os.path.join(sshd_dir, "copyright"), "rb") as f, open(
            os.path.join(licenses, "openssh.copyright"), "wb") as out:
        out.write(f.read())
    packages = [own_package("SPDXRef-k8s-agent-sshd", "k8s-agent-sshd",
                            version, commit, entry)]
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT",
                      "relationshipType": "DESCRIBES",
                      "relatedSpdxElement": "SPDXRef-k8s-agent-sshd"},
                     {"spdxElementId": "SPDXRef-k8s-agent-sshd",
                      "relationshipType": "STATIC_LINK",
                      "relatedSpdxElement": "SPDXRef-libstdcxx"}]
    linked = ["SPDXRef-openssl"]
    for name, dev, licence in SSHD_LINKED:
        spdx_id = "SPDXRef-sshd-" + name
        packages.append(dev_component(spdx_id, name, dev, licence, licenses,
                                      sshd_dir, arch == "x86_64"))
        linked.append(spdx_id)
    for binary in SSHD_BINARIES:
        spdx_id = "SPDXRef-openssh-" + binary
        packages.append({
            "SPDXID": spdx_id, "name": binary,
            "versionInfo": pin.split(":")[-1],
            "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
            "licenseConcluded": "SSH-OpenSSH", "licenseDeclared": "SSH-OpenSSH",
            "copyrightText": "see licenses/openssh.copyright",
            "sourceInfo": "built by scripts/sshd_build.sh from Debian source "
                          "package openssh " + pin,
            "checksums": [{"algorithm": "SHA256", "checksumValue":
                           sha256_of(os.path.join(sshd_dir, binary))}],
            "externalRefs": [{
                "referenceCategory": "PACKAGE-MANAGER",
                "referenceType": "purl",
                "referenceLocator": "pkg:deb/debian/openssh@%s?arch=source"
                                    % pin}],
        })
        relationships.append({"spdxElementId": "SPDXRef-DOCUMENT",
                              "relationshipType": "DESCRIBES",
                              "relatedSpdxElement": spdx_id})
        relationships += [{"spdxElementId": spdx_id,
                           "relationshipType": "STATIC_LINK",
                           "relatedSpdxElement": lib} for lib in linked]
    return packages, relationships


def main(binary, prefix, out_sbom, licenses, arch="x86_64", sshd_entry=None,
         sshd_dir=None):
    if arch not in RUNNERS:
        raise SystemExit("sbom: unknown arch " + arch)
    version, commit, date, linked = linked_versions(binary, arch)
    os.makedirs(licenses, exist_ok=True)
    packages = [own_package("SPDXRef-k8s-agent", "k8s-agent", version, commit,
                            binary)]
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT",
                      "relationshipType": "DESCRIBES",
                      "relatedSpdxElement": "SPDXRef-k8s-agent"}]
    for shown, source, dev, licence in COMPONENTS:
        if shown not in linked:
            raise SystemExit("sbom: %s --version names no %s" % (binary,
                                                                  shown))
        if dev is None:
            deb_version, tarball = kept_source(prefix, source)
            if tarball is None:
                raise SystemExit("sbom: no copyright file for " + source)
            text = copyright_from_debian_tarball(tarball)
        else:
            source, deb_version, text = dev_source(dev, prefix,
                                                   arch == "x86_64")
        with open(os.path.join(licenses, source + ".copyright"), "wb") as f:
            f.write(text)
        spdx_id = "SPDXRef-" + source
        packages.append({
            "SPDXID": spdx_id, "name": shown, "versionInfo": linked[shown],
            "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
            "licenseConcluded": licence, "licenseDeclared": licence,
            "copyrightText": "see licenses/%s.copyright" % source,
            "sourceInfo": "Debian source package %s %s" % (source,
                                                           deb_version),
            "externalRefs": [{
                "referenceCategory": "PACKAGE-MANAGER",
                "referenceType": "purl",
                "referenceLocator": "pkg:deb/debian/%s@%s?arch=source"
                                    % (source, deb_version)}],
        })
        relationships.append({"spdxElementId": "SPDXRef-k8s-agent",
                              "relationshipType": "STATIC_LINK",
                              "relatedSpdxElement": spdx_id})
    # libstdc++ and libgcc are linked statically too, under GCC's runtime
    # library exception (its text is in gcc-N-base's copyright).
    gcc = subprocess.run([CXX[arch], "-dumpversion"], check=True,
                         capture_output=True, text=True).stdout.strip().split(".")[0]
    libstdcxx = LIBSTDCXX[arch] % gcc
    source, deb_version = dpkg_source(libstdcxx)
    # The cross package's source version is the cross build's own number
    # ("gcc-12-cross 15"): GCC's is its binary version (12.2.0-14cross1).
    gcc_version = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", libstdcxx], check=True,
        capture_output=True, text=True).stdout if arch != "x86_64" else deb_version
    with open("/usr/share/doc/%s/copyright" % libstdcxx, "rb") as f:
        text = f.read()
    with open(os.path.join(licenses, source + ".copyright"), "wb") as f:
        f.write(text)
    packages.append({
        "SPDXID": "SPDXRef-libstdcxx", "name": "libstdc++",
        "versionInfo": gcc_version.split("-")[0],
        "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
        "licenseConcluded": "GPL-3.0-or-later WITH GCC-exception-3.1",
        "licenseDeclared": "GPL-3.0-or-later WITH GCC-exception-3.1",
        "copyrightText": "see licenses/%s.copyright" % source,
        "sourceInfo": "Debian source package %s %s" % (source, deb_version),
    })
    relationships.append({"spdxElementId": "SPDXRef-k8s-agent",
                          "relationshipType": "STATIC_LINK",
                          "relatedSpdxElement": "SPDXRef-libstdcxx"})
    if sshd_entry:
        # The sshd's OpenSSL is described by the agent's component: it must
        # be the same build of the same pin.
        if prefix_source(sshd_dir, "libssl-dev") != prefix_source(
                prefix, "libssl-dev"):
            raise SystemExit(
                "sbom: the sshd in %s links OpenSSL %s, the agent %s: "
                "rebuild both (scripts/sshd_build.sh ensure, "
                "scripts/third_party.sh ensure)" % (
                    sshd_dir, prefix_source(sshd_dir, "libssl-dev"),
                    prefix_source(prefix, "libssl-dev")))
        more, links = worker_side(sshd_entry, sshd_dir, version, commit,
                                  licenses, arch)
        packages += more
        relationships += links
    doc = {
        "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": "k8s-agent-%s" % version,
        "documentNamespace": "https://spdx.org/spdxdocs/k8s-agent-%s-%s%s"
                             % (version, commit,
                                "" if arch == "x86_64" else "-" + arch),
        "creationInfo": {"created": utc(date),
                         "creators": ["Tool: k8s-agent-scripts/release.sh"]},
        "packages": packages, "relationships": relationships,
    }
    with open(out_sbom, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6, 8):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
