#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Writes the release archive: the launcher's and the workers' programs, what configures and deploys them,
# and the docs:
#   dist/k8s-agent-VERSION-linux-x86_64.tar.gz
#     bin/             k8s-agent, k8s-agent-inject (`k8s-agent inject` runs it), k8s-agent-sshd (the workers'
#                      entry), k8s-agent-deliver (the delivery image's copier), and the portable OpenSSH
#                      server k8s-agent-sshd runs from beside itself: sshd, sshd-session, sshd-auth
#                      (scripts/sshd_build.sh, cached)
#     ompi-conf/       the MCA presets and their README
#     images/          ompi-env.sh, README.md and k8s/ (the manifests, kustomization and examples/)
#     docs/            docs/*.md and the figures they and README.md show (bench/results/)
#     README.md, SECURITY.md, CHANGELOG.md, LICENSE
#     sbom.spdx.json, licenses/   the SBOM of the agent and the workers' side, and the licence of each
#                                 statically linked library
#   dist/k8s-agent-VERSION-linux-x86_64.tar.gz.sha256
#   (linux-aarch64 with --arch aarch64, beside them)
#   with --images (x86_64, as root): the container images of this build, k8s-agent (delivery),
#   k8s-agent-worker and k8s-agent-launcher (scripts/images.sh --no-build, tagged VERSION with "+" made
#   "-", OCI labels and SBOM inside), each saved by podman as an OCI archive:
#   dist/k8s-agent-images-VERSION/NAME-VERSION-linux-amd64.oci.tar
#   dist/IMAGES           one line per archive: ARCHIVE IMAGE DIGEST, the image's name in the archive
#                         (localhost/NAME:TAG, what `podman load` names it) and the digest of its manifest
#                         in the archive (podman load records it: podman image inspect's RepoDigests; skopeo
#                         copy --preserve-digests keeps it in a registry); an IMAGES of another version goes
#   dist/SHA256SUMS       the checksums of every k8s-agent-VERSION-linux-*.tar.gz in the directory (both
#                         arches after two runs), of k8s-agent-images-VERSION/*.oci.tar and of IMAGES when
#                         there (a later run without --images keeps them listed), rewritten at each run
#   dist/SHA256SUMS.sig   with --sign-key: its SSH signature (ssh-keygen -Y sign -n file); without a key
#                         none (an old one is removed: it no longer matches) and a line on stderr says so
# Verify (README.md, "Releases"): ssh-keygen -Y verify -f allowed_signers -I ID -n file -s SHA256SUMS.sig
#   < SHA256SUMS && sha256sum -c SHA256SUMS; then podman load -i ARCHIVE (its digest is IMAGES')
#
# VERSION is the binary's (k8s-agent --version), from the git tag (cmake/build_info.cmake): X.Y.Z at a tag
# vX.Y.Z, X.Y.(Z+1)-dev.N+gSHORT N commits after it, 0.1.0-dev.N+gSHORT before the first tag.
#
# usage: scripts/release.sh [--arch x86_64|aarch64] [--build-dir DIR] [--out DIR] [--allow-dirty]
#                           [--sign-key KEY] [--images] [--help]
#   --arch ARCH      x86_64 (default) or aarch64: the binary cross-built by the "aarch64" preset
#                    (Debian's cross toolchain; scripts/deps.sh --aarch64), run here under qemu-user
#   --build-dir DIR  package the k8s-agent already built in DIR (default: build ARCH's preset)
#   --out DIR        where to write (default: dist/)
#   --sign-key KEY   sign SHA256SUMS with the SSH private key KEY (its public half goes in the verifiers'
#                    allowed_signers)
#   --allow-dirty    package a binary built from a tree with uncommitted changes (its --version says so)
#   --images         also build the images from DIR's binaries and save them (above); x86_64 only (worker
#                    and launcher are amd64), as root (podman's root store, as scripts/images.sh)
# The binaries are the default (or aarch64) build's (static but for glibc >= 2.34), with their debug info
# stripped. Each must have been built from the commit the tree is at (its --version names it), so an archive
# never pairs one commit's README with another's binary.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="" out="dist" allow_dirty=0 arch=x86_64 sign_key="" images=0
# The header above, without its "# ": asked for, on stdout and exit 0; after a bad option, on stderr.
usage() { awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; }
while (($#)); do
  case "$1" in
  -h | --help) usage; exit 0 ;;
  --arch | --build-dir | --out | --sign-key)
    (($# >= 2)) || { echo "release: $1 needs a value" >&2; usage >&2; exit 2; }
    case "$1" in
    --arch) arch="$2" ;;
    --build-dir) build_dir="$2" ;;
    --out) out="$2" ;;
    --sign-key) sign_key="$2" ;;
    esac
    shift 2
    ;;
  --allow-dirty) allow_dirty=1; shift ;;
  --images) images=1; shift ;;
  *) echo "release: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
die() { echo "release: $*" >&2; exit 1; }
# Per arch: the preset, the ELF machine readelf names, how the binary runs here, the strip of its binutils.
# A key that cannot sign is found before anything is built.
if [[ -n "$sign_key" ]]; then
  [[ -r "$sign_key" ]] || die "--sign-key $sign_key: no such readable file"
  command -v ssh-keygen >/dev/null || die "--sign-key needs ssh-keygen (openssh-client)"
fi
if ((images)); then
  [[ "$arch" == x86_64 ]] || die "--images: the images are amd64 (worker and launcher): release.sh --images without --arch $arch"
  [[ $EUID -eq 0 ]] || die "--images: run as root (scripts/images.sh builds into root's podman store)"
fi
case "$arch" in
x86_64) preset=default machine="Advanced Micro Devices X86-64" run=() strip=strip ;;
aarch64)
  preset=aarch64 machine=AArch64 run=(qemu-aarch64-static -L /usr/aarch64-linux-gnu) strip=aarch64-linux-gnu-strip
  if ! command -v qemu-aarch64-static >/dev/null || ! command -v "$strip" >/dev/null; then
    die "--arch aarch64 needs qemu-user-static and binutils-aarch64-linux-gnu: scripts/deps.sh --aarch64"
  fi
  ;;
*) die "--arch $arch: x86_64 or aarch64" ;;
esac
if [[ -z "$build_dir" ]]; then
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" --target k8s-agent k8s-agent-inject k8s-agent-sshd k8s-agent-deliver
  build_dir=build  # CMakePresets.json's binaryDir
  [[ "$arch" == x86_64 ]] || build_dir="build-$arch"
fi
bin="$build_dir/launcher/k8s-agent"
[[ -x "$bin" ]] || { echo "release: $bin not built" >&2; exit 1; }
# A binary of another architecture is never packaged under this one's name (a script stand-in has no ELF
# header: the commit check below refuses it).
if head -c4 "$bin" | grep -q $'^\x7fELF'; then
  got="$(readelf -h "$bin" | sed -n 's/^ *Machine: *//p')"
  [[ "$got" == "$machine" ]] || die "$bin is a $got binary, not $arch"
fi
version_text="$(${run[@]+"${run[@]}"} "$bin" --version)" || die "$bin --version failed"
version="$(awk 'NR == 1 {print $2}' <<<"$version_text")"
[[ -n "$version" ]] || die "$bin --version printed no version"
built="$(awk '$1 == "commit" {print $2}' <<<"$version_text")"
head="$(git rev-parse HEAD 2>/dev/null)" || die "not a git checkout: the archive names its commit"
dirty=""
git diff --quiet HEAD -- || dirty="-dirty"
[[ "${built%-dirty}" == "$head" ]] ||
  die "$bin was built from commit ${built:-unknown}, the tree is at $head: build it again (cmake --build $build_dir)"
if [[ "$built" == *-dirty || -n "$dirty" ]] && ((!allow_dirty)); then
  die "the tree or the binary ($built) has uncommitted changes: commit them, or pass --allow-dirty"
fi
[[ "$built" == "$head$dirty" ]] ||
  die "$bin ($built) was built before the tree's last changes ($head$dirty): build it again"
# The version is the git tag's (cmake/build_info.cmake): a tag made after the build is not in the binary.
base="$(sed -n 's/^project(k8s-agent VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)"
info="$(mktemp)"
cmake -DSRC="$PWD" -DOUT="$info" -DBASE_VERSION="$base" -P cmake/build_info.cmake ||
  { rm -f "$info"; die "cmake/build_info.cmake failed"; }
want="$(sed -n 's/^#define K8S_AGENT_VERSION "\(.*\)"$/\1/p' "$info")"
rm -f "$info"
[[ "$version" == "$want" ]] ||
  die "$bin says version $version, the tree's tags make it $want: build it again (cmake --build $build_dir)"
# The other programs are the same build's: `k8s-agent inject` execs k8s-agent-inject from the agent's
# directory; the workers run k8s-agent-sshd and the copier of the same release.
inject="$build_dir/launcher/k8s-agent-inject"
sshd_entry="$build_dir/launcher/k8s-agent-sshd"
deliver="$build_dir/images/k8s-agent-deliver"
for program in "$inject" "$sshd_entry" "$deliver"; do
  [[ -x "$program" ]] || die "$program not built (cmake --build $build_dir --target $(basename "$program"))"
  program_built="$(${run[@]+"${run[@]}"} "$program" --version | awk '$1 == "commit" {print $2}')" ||
    die "$program --version failed"
  [[ "$program_built" == "$built" ]] ||
    die "$program was built from commit ${program_built:-unknown}, $bin from $built: build both again"
done
# The portable sshd beside k8s-agent-sshd (which runs the one beside itself), as the delivery image has it.
sshd_dir="$(scripts/sshd_build.sh ensure "$arch")" || die "building the portable sshd ($arch) failed (see above)"
name="k8s-agent-$version-linux-$arch"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
mkdir -p "$root/bin" "$root/ompi-conf" "$root/images/k8s" "$root/docs"
for program in "$bin" "$inject" "$sshd_entry" "$deliver"; do
  "$strip" --strip-debug -o "$root/bin/$(basename "$program")" "$program"
done
# Built stripped; copied as they are (the SBOM names their checksums).
cp "$sshd_dir/sshd" "$sshd_dir/sshd-session" "$sshd_dir/sshd-auth" "$root/bin/"
cp ompi-conf/* "$root/ompi-conf/"
cp images/ompi-env.sh images/README.md "$root/images/"
cp -r images/k8s/. "$root/images/k8s/"
cp docs/*.md "$root/docs/"
# The figures README.md and docs/ show, found by their links, so a new figure needs no line here
# (tests/portable/release_test.sh: every relative link resolves).
while read -r figure; do
  if ! mkdir -p "$root/$(dirname "$figure")" || ! cp "$figure" "$root/$figure"; then die "copying $figure failed"; fi
done < <(grep -ohE '\]\((\.\./)?bench/results/[^)]+\)' README.md docs/*.md | sed -E 's/^\]\((\.\.\/)?//; s/\)$//' |
  sort -u)
cp README.md SECURITY.md CHANGELOG.md LICENSE "$root/"
# The SBOM (SPDX 2.3: each linked library, its Debian source package, each binary's checksum) and the
# licence texts of everything linked in statically, the workers' side (k8s-agent-sshd, OpenSSH) included.
/usr/bin/python3 scripts/lib/sbom.py "$root/bin/k8s-agent" "$(scripts/third_party.sh path "$arch")" \
  "$root/sbom.spdx.json" "$root/licenses" "$arch" "$root/bin/k8s-agent-sshd" "$sshd_dir" ||
  die "writing the SBOM failed"
# Modes as they are meant, whatever the umask or the checkout gave (two machines, one archive).
find "$root" -type d -exec chmod 0755 {} +
find "$root" -type f -exec chmod 0644 {} +
chmod 0755 "$root"/bin/*
mkdir -p "$out"
# Reproducible: fixed owner, order and time (the last commit's); two builds of one commit give the same
# archive (tests/portable/repro_test.sh).
mtime="$(git log -1 --format=%cI 2>/dev/null || echo 2026-01-01T00:00:00Z)"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" -C "$stage" -cf - "$name" |
  gzip -n -9 >"$out/$name.tar.gz"
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
images_dir="k8s-agent-images-$version"
if ((images)); then
  # The images of exactly these binaries (images.sh builds from DIR as it is), under the version's tag.
  tag="${version//+/-}"
  bash scripts/images.sh --build-dir "$build_dir" --no-build --tag "$tag" >&2 || die "scripts/images.sh failed (see above)"
  rm -rf "${out:?}/$images_dir" "$out/IMAGES.new"
  mkdir -p "$out/$images_dir"
  for image in k8s-agent k8s-agent-worker k8s-agent-launcher; do
    ref="localhost/$image:$tag"
    labels="$(podman image inspect -f '{{index .Labels "org.opencontainers.image.version"}} {{index .Labels "org.opencontainers.image.revision"}}' "$ref")" ||
      die "no image $ref"
    [[ "$labels" == "$version $built" ]] || die "$ref is labelled $labels, not $version $built"
    file="$images_dir/$image-$version-linux-amd64.oci.tar"
    podman save -q --format oci-archive -o "$out/$file" "$ref" >/dev/null || die "podman save $ref failed"
    # The digest of the manifest the archive holds (podman's own digest of the stored image is of its
    # uncompressed layers: saving compresses them), checked against its blob.
    digest="$(/usr/bin/python3 -c '
import hashlib, json, sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    index = json.load(t.extractfile("index.json"))
    assert len(index["manifests"]) == 1, index
    digest = index["manifests"][0]["digest"]
    blob = t.extractfile("blobs/" + digest.replace(":", "/")).read()
assert "sha256:" + hashlib.sha256(blob).hexdigest() == digest, digest
print(digest)' "$out/$file")" || die "reading the manifest digest of $out/$file failed"
    printf '%s %s %s\n' "$file" "$ref" "$digest" >>"$out/IMAGES.new"
  done
  mv "$out/IMAGES.new" "$out/IMAGES"
elif [[ -f "$out/IMAGES" ]] && awk -v d="$images_dir/" 'index($1, d) != 1 { stale = 1 } END { exit !stale }' "$out/IMAGES"; then
  # It names archives of another version, which SHA256SUMS (this version's) does not cover.
  echo "release: removing $out/IMAGES (another version's images)" >&2
  rm -f "$out/IMAGES"
fi
# One checksum file over this version's archives (every arch written here) and images, signed when asked.
(
  cd "$out"
  shopt -s nullglob
  archives=("k8s-agent-$version-linux-"*.tar.gz "$images_dir/"*.oci.tar)
  [[ ! -f IMAGES ]] || archives+=(IMAGES)
  sha256sum "${archives[@]}" >SHA256SUMS.new && mv SHA256SUMS.new SHA256SUMS
) || die "writing $out/SHA256SUMS failed"
rm -f "$out/SHA256SUMS.sig"
if [[ -n "$sign_key" ]]; then
  ssh-keygen -q -Y sign -n file -f "$sign_key" "$out/SHA256SUMS" >&2 || die "signing $out/SHA256SUMS failed"
else
  echo "release: $out/SHA256SUMS is not signed (no --sign-key)" >&2
fi
echo "$out/$name.tar.gz"
