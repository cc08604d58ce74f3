#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The release archive (scripts/release.sh) and the binary extracted from it.
#
# usage: release_test.sh SOURCE_DIR BUILD_DIR SANITIZED(ON|OFF) MODE [ARCH]
#   ARCH x86_64 (default) or aarch64 (archive only; BUILD_DIR the "aarch64" preset's, the binary run under
#        qemu-user; tests/portable/arm64_test.sh)
#   archive  name, checksum and contents; the binary runs here
#   trixie   inside the cached Debian 13 root (tests/bed/ompi5_root.sh; none of the build's libraries):
#            --version, then two agent integration scenarios (fake API server over TLS, loopback
#            sshd) with the agent run by chroot
#   bed      an e2e launch (mpirun in the network-namespace bed) with the extracted binary
# Exit 77 (skip) for the sanitizer build, without root (trixie, bed), or without a cached root (trixie).
set -uo pipefail
src="$1" build="$2" sanitized="$3" mode="$4" arch="${5:-x86_64}"
# shellcheck source=tests/lib/testlib.sh
source "$(dirname "$0")/../lib/testlib.sh"
if [[ "$sanitized" == ON ]]; then
  skip "sanitizer build (only the default build is released)"
fi
if [[ "$mode" != archive && $EUID -ne 0 ]]; then
  skip "$mode needs root (chroot / network namespaces)"
fi
tmp="$(mktemp -d /tmp/k8s-agent-release-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
case "$arch" in
x86_64) run=() cxx=g++ other=aarch64 ;;
aarch64)
  [[ "$mode" == archive ]] || fail "mode $mode is x86_64 only"
  run=(qemu-aarch64-static -L /usr/aarch64-linux-gnu) cxx=aarch64-linux-gnu-g++ other=x86_64
  ;;
*) fail "arch $arch" ;;
esac
rel=("$src/scripts/release.sh" --arch "$arch")

# A binary of the other architecture is refused.
if [[ "$arch" == aarch64 ]]; then
  out="$("$src/scripts/release.sh" --arch "$other" --build-dir "$build" --out "$tmp/refused" 2>&1)" &&
    fail "release.sh packaged the $arch binary as $other"
  [[ "$out" == *"is a AArch64 binary, not $other"* ]] || fail "refusal: $out"
fi
# A binary of another commit is refused (a stand-in that says so).
mkdir -p "$tmp/other/launcher"
printf '#!/bin/sh\nprintf "k8s-agent 0.1.0\\ncommit %s (2026-01-01T00:00:00+00:00)\\n"\n' \
  0000000000000000000000000000000000000000 >"$tmp/other/launcher/k8s-agent"
chmod +x "$tmp/other/launcher/k8s-agent"
out="$("$src/scripts/release.sh" --build-dir "$tmp/other" --out "$tmp/refused" 2>&1)" &&
  fail "release.sh packaged a binary of another commit"
[[ "$out" == *"was built from commit 0000000000000000000000000000000000000000"* ]] || fail "refusal: $out"
allow=()
if ! git -C "$src" diff --quiet HEAD --; then
  # Uncommitted changes (a developer's tree; CI's clone has none): refused unless asked.
  "${rel[@]}" --build-dir "$build" --out "$tmp/refused" >/dev/null 2>&1 &&
    fail "release.sh packaged a dirty tree without --allow-dirty"
  allow=(--allow-dirty)
fi
archive="$("${rel[@]}" --build-dir "$build" --out "$tmp/dist" "${allow[@]}")" || fail "release.sh failed"
# Reproducible: the same commit and binary give the same bytes.
again="$("${rel[@]}" --build-dir "$build" --out "$tmp/again" "${allow[@]}")" || fail "release.sh failed"
cmp -s "$archive" "$again" || fail "two archives of one build differ"
name="$(basename "$archive" .tar.gz)"
# The binary's version (the git tag's: cmake/build_info.cmake, tests/launcher/version_test.sh).
version="$(${run[@]+"${run[@]}"} "$build/launcher/k8s-agent" --version | awk 'NR == 1 { print $2 }')"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]] || fail "version $version"
[[ "$name" == "k8s-agent-$version-linux-$arch" ]] || fail "archive name $name, version $version"
mkdir -p "$tmp/x"
tar -xzf "$archive" -C "$tmp/x" || fail "cannot extract $archive"
bin="$tmp/x/$name/bin/k8s-agent"

case "$mode" in
archive)
  (cd "$tmp/dist" && sha256sum -c "$name.tar.gz.sha256") || fail "checksum"
  # Unsigned without --sign-key: SHA256SUMS alone, and release.sh says so.
  (cd "$tmp/dist" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS"
  [[ ! -e "$tmp/dist/SHA256SUMS.sig" ]] || fail "a signature without --sign-key"
  "${rel[@]}" --build-dir "$build" --out "$tmp/dist" "${allow[@]}" 2>"$tmp/unsigned.err" >/dev/null ||
    fail "release.sh failed: $(cat "$tmp/unsigned.err")"
  grep -q "SHA256SUMS is not signed (no --sign-key)" "$tmp/unsigned.err" || fail "no unsigned line: $(cat "$tmp/unsigned.err")"
  # Signed with a throwaway key, verified as README.md says (allowed_signers, -I, -n file).
  ssh-keygen -q -t ed25519 -N "" -C release-test -f "$tmp/release-key" || fail "ssh-keygen"
  echo "release@k8s-agent.invalid $(cut -d' ' -f1,2 "$tmp/release-key.pub")" >"$tmp/allowed_signers"
  "${rel[@]}" --build-dir "$build" --out "$tmp/signed" --sign-key "$tmp/release-key" "${allow[@]}" >/dev/null ||
    fail "release.sh --sign-key failed"
  # Another arch's archive of the version in the same dir is in SHA256SUMS too (here: a copy under that name).
  cp "$tmp/signed/$name.tar.gz" "$tmp/signed/${name%-linux-*}-linux-$other.tar.gz"
  "${rel[@]}" --build-dir "$build" --out "$tmp/signed" --sign-key "$tmp/release-key" "${allow[@]}" >/dev/null ||
    fail "release.sh --sign-key failed"
  [[ "$(wc -l <"$tmp/signed/SHA256SUMS")" == 2 ]] || fail "SHA256SUMS: $(cat "$tmp/signed/SHA256SUMS")"
  verify() {
    (cd "$tmp/signed" &&
      ssh-keygen -Y verify -f "$tmp/allowed_signers" -I release@k8s-agent.invalid -n file -s SHA256SUMS.sig <SHA256SUMS &&
      sha256sum -c SHA256SUMS)
  }
  verify || fail "the signed SHA256SUMS does not verify"
  # Tampered: an archive byte, then the checksum file (its signature no longer matches), then the identity.
  cp "$tmp/signed/$name.tar.gz" "$tmp/keep.tar.gz"
  printf 'x' | dd of="$tmp/signed/$name.tar.gz" bs=1 seek=100 conv=notrunc status=none
  verify >/dev/null 2>&1 && fail "a tampered archive verified"
  cp "$tmp/keep.tar.gz" "$tmp/signed/$name.tar.gz"
  verify >/dev/null || fail "the restored archive does not verify"
  cp "$tmp/signed/SHA256SUMS" "$tmp/keep.sums"
  sha256sum "$tmp/signed/$name.tar.gz" | sed "s|$tmp/signed/||" >"$tmp/signed/SHA256SUMS"
  verify >/dev/null 2>&1 && fail "a tampered SHA256SUMS verified"
  cp "$tmp/keep.sums" "$tmp/signed/SHA256SUMS"
  (cd "$tmp/signed" && ssh-keygen -Y verify -f "$tmp/allowed_signers" -I someone@else.invalid -n file \
    -s SHA256SUMS.sig <SHA256SUMS) >/dev/null 2>&1 && fail "verified as another identity"
  echo "ok: SHA256SUMS signed; tampered archive, tampered SHA256SUMS and a wrong identity fail"
  # The tree's files, under the archive's root as in the tree: dirs with a trailing /, as tar lists them.
  tree() { (cd "$src" && find "$@" \( -type d -printf '%p/\n' \) -o \( -type f -print \)) | sed "s|^|$name/|"; }
  want="$name/
$name/CHANGELOG.md
$name/LICENSE
$name/README.md
$name/SECURITY.md
$name/bench/
$name/bench/results/
$name/bench/results/curve_256/
$name/bench/results/curve_256/launch_vs_n.png
$name/bench/results/demo_launch.svg
$name/bench/results/n128/
$name/bench/results/n128/launch_vs_n.png
$name/bin/
$name/bin/k8s-agent
$name/bin/k8s-agent-deliver
$name/bin/k8s-agent-inject
$name/bin/k8s-agent-sshd
$name/bin/sshd
$name/bin/sshd-auth
$name/bin/sshd-session
$name/images/
$name/images/README.md
$name/images/ompi-env.sh
$(tree images/k8s)
$name/docs/
$(cd "$src" && for f in docs/*.md; do echo "$name/$f"; done)
$name/licenses/
$name/licenses/curl.copyright
$name/licenses/gcc-$("$cxx" -dumpversion | cut -d. -f1)$([[ "$arch" == x86_64 ]] || echo -cross).copyright
$name/licenses/libssh2.copyright
$name/licenses/libxcrypt.copyright
$name/licenses/nghttp2.copyright
$name/licenses/openssh.copyright
$name/licenses/openssl.copyright
$name/licenses/yaml-cpp.copyright
$name/licenses/zlib.copyright
$name/sbom.spdx.json
$(tree ompi-conf)"
  got="$(tar -tzf "$archive" | sort)"
  [[ "$got" == "$(sort <<<"$want")" ]] || fail "contents: $got"
  grep -q "Apache License" "$tmp/x/$name/LICENSE" || fail "LICENSE is not the Apache licence"
  # Every program is the build's, and says so; the portable sshd is sshd_build.sh's, as it built it.
  for program in k8s-agent-inject k8s-agent-sshd k8s-agent-deliver; do
    out="$(${run[@]+"${run[@]}"} "$tmp/x/$name/bin/$program" --version)" || fail "$program --version: $out"
    [[ "$(head -n1 <<<"$out")" == "$program $version" ]] || fail "$program --version: $out"
  done
  sshd_dir="$("$src/scripts/sshd_build.sh" path "$arch")"
  for program in sshd sshd-session sshd-auth; do
    cmp -s "$sshd_dir/$program" "$tmp/x/$name/bin/$program" || fail "bin/$program is not $sshd_dir/$program"
  done
  # The archive's Markdown links only to what it holds (README.md's docs/ and figures, docs/'s ../).
  (cd "$tmp/x/$name" && find . -name '*.md' | sort | while read -r md; do
    grep -o '\]([^)]*)' "$md" | sed 's/^](//; s/)$//; s/#.*//' | grep -v -e '^$' -e '^[a-z]*:' |
      while read -r link; do
        [[ -e "$(dirname "$md")/$link" ]] || echo "$md links to $link, which the archive lacks"
      done
  done) >"$tmp/links"
  [[ ! -s "$tmp/links" ]] || fail "$(cat "$tmp/links")"
  version="$(${run[@]+"${run[@]}"} "$bin" --version)" || fail "--version: $version"
  grep -q "^k8s-agent " <<<"$version" || fail "--version: $version"
  head="$(git -C "$src" rev-parse HEAD)"
  grep -Eq "^commit $head(-dirty)? \(" <<<"$version" || fail "--version names no commit $head: $version"
  grep -Eq "^linked: OpenSSL [0-9.]+, libssh2 1\.11\.[0-9]+, libcurl [0-9.]+, nghttp2 [0-9.]+, yaml-cpp [0-9]" <<<"$version" ||
    fail "--version lists no linked libraries: $version"
  # The SBOM names what --version reports linked, each with a Debian source package, and the checksum of
  # the binary shipped beside it; every statically linked library has its licence text.
  grep -q "runtime library exception\|GCC RUNTIME LIBRARY EXCEPTION" "$tmp/x/$name/licenses/"gcc-*.copyright ||
    fail "no GCC runtime library exception text"
  /usr/bin/python3 - "$tmp/x/$name" ${run[@]+"${run[@]}"} <<'EOF' || fail "SBOM does not match the binary"
import hashlib, json, re, subprocess, sys
root, run = sys.argv[1], sys.argv[2:]
doc = json.load(open(root + "/sbom.spdx.json"))
assert doc["spdxVersion"] == "SPDX-2.3" and doc["dataLicense"] == "CC0-1.0", doc["spdxVersion"]
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["creationInfo"]["created"])
pkgs = {p["name"]: p for p in doc["packages"]}
pkgs_by_id = {p["SPDXID"]: p for p in doc["packages"]}
out = subprocess.run(run + [root + "/bin/k8s-agent", "--version"], capture_output=True, text=True).stdout
linked = dict(item.split(" ", 1) for item in re.search(r"^linked: (.*)$", out, re.M).group(1).split(", "))
for name, version in linked.items():
    p = pkgs[name]
    assert p["versionInfo"] == version, (name, p["versionInfo"], version)
    assert p["sourceInfo"].startswith("Debian source package "), p["sourceInfo"]
    assert p["externalRefs"][0]["referenceLocator"].startswith("pkg:deb/debian/"), p
agent = pkgs["k8s-agent"]
digest = hashlib.sha256(open(root + "/bin/k8s-agent", "rb").read()).hexdigest()
assert agent["checksums"] == [{"algorithm": "SHA256", "checksumValue": digest}], agent["checksums"]
assert agent["versionInfo"] == out.split()[1]
def linked_into(spdx_id):
    return {r["relatedSpdxElement"] for r in doc["relationships"]
            if r["relationshipType"] == "STATIC_LINK" and r["spdxElementId"] == spdx_id}
links = linked_into("SPDXRef-k8s-agent")
assert links == {"SPDXRef-" + n for n in ("openssl", "libssh2", "curl", "nghttp2", "yaml-cpp", "libstdcxx")}, links
# The workers' side: k8s-agent-sshd and the portable sshd, each with the checksum of the file shipped.
for spdx_id, path in (("SPDXRef-k8s-agent-sshd", "k8s-agent-sshd"), ("SPDXRef-openssh-sshd", "sshd"),
                      ("SPDXRef-openssh-sshd-session", "sshd-session"), ("SPDXRef-openssh-sshd-auth", "sshd-auth")):
    digest = hashlib.sha256(open(root + "/bin/" + path, "rb").read()).hexdigest()
    assert pkgs_by_id[spdx_id]["checksums"] == [{"algorithm": "SHA256", "checksumValue": digest}], spdx_id
assert "SPDXRef-openssl" in linked_into("SPDXRef-openssh-sshd")
print("ok: SBOM lists %s" % ", ".join("%s %s" % (n, v) for n, v in linked.items()))
EOF
  "$src/tests/portable/portable_binary_test.sh" "$bin" OFF "$arch" || fail "the released binary is not portable"
  echo "ok: $name: contents, checksum, programs, links, portable"
  ;;
trixie)
  root="$("$src/tests/bed/ompi5_root.sh" path)"
  if ! "$src/tests/bed/ompi5_root.sh" check; then
    skip "no cached Debian 13 root at $root (tests/bed/ompi5_root.sh ensure builds it, ~6 min)"
  fi
  grep -q '^VERSION_ID="13"' "$root/etc/os-release" || fail "$root is not Debian 13"
  # The root has no libssh2/libcurl of the build (and never gets any: it is only bind-mounted
  # into, in a private mount namespace).
  # Runs the extracted binary in the root; /tmp is shared so the scenario's files are visible.
  cat >"$tmp/agent-in-trixie" <<WRAP
#!/bin/sh
exec unshare --mount --propagation private sh -c 'mount --bind /tmp "\$0/tmp" && mount --bind -o ro "\$1" "\$0/mnt" && shift 2 && exec chroot "\$0" /mnt/bin/k8s-agent "\$@"' "$root" "$tmp/x/$name" x "\$@"
WRAP
  chmod 755 "$tmp/agent-in-trixie"
  out="$("$tmp/agent-in-trixie" --version 2>&1)" || fail "in Debian 13: $out"
  echo "ok: in Debian 13 ($root): $out"
  for test in lookup_test.sh:ready exec_io_test.sh:exit-status; do
    scenario=${test#*:}
    "$src/tests/integration/agent/${test%%:*}" "$tmp/agent-in-trixie" "$scenario" || fail "scenario $scenario in Debian 13"
  done
  ;;
bed)
  BED_CACHE="$build/tests/integration/e2e/bed-cache" bash "$src/tests/integration/e2e/e2e.sh" --agent "$bin" s01_all_ready
  exit $?
  ;;
*) fail "mode $mode" ;;
esac
