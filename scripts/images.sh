#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the container images with podman, from the k8s-agent built on this
# machine (built first if missing; never compiled inside an image). Installs
# the Debian packages it lacks (podman, debootstrap, the build's own):
#   k8s-agent           delivery image: the binary, the MCA presets and a
#                       static copier, to put the agent into any image;
#                       amd64 and, with --arch, arm64 (a manifest list)
#   k8s-agent-worker    Debian + Open MPI + sshd on 2222 as uid 1000
#   k8s-agent-launcher  Debian + Open MPI's mpirun, k8s-agent as its agent
#
#   sudo scripts/images.sh [options] [delivery|worker|launcher]...   (default: all three)
#     --build-dir DIR   where k8s-agent and k8s-agent-deliver are built (default build/)
#     --arch LIST       the delivery image's architectures: amd64 (default), arm64 or
#                       amd64,arm64. One: the image k8s-agent:TAG. Both: k8s-agent:TAG-amd64,
#                       k8s-agent:TAG-arm64 and the manifest list k8s-agent:TAG over the two.
#                       Worker and launcher are amd64 whatever LIST says.
#     --aarch64-build-dir DIR  the "aarch64" preset's build, where the arm64 k8s-agent and
#                       k8s-agent-deliver are (cross-)built (default build-aarch64/)
#     --tag TAG         image tag (default: the release version, k8s-agent --version's first
#                       line, with "+" made "-" as OCI tags cannot hold "+": 0.1.0-dev.3+gabc
#                       is tagged 0.1.0-dev.3-gabc; scripts/release.sh --images uses the same)
#     --base IMAGE      Debian base of worker and launcher (default debian:bookworm-slim)
#     --context DIR     only stage the build context in DIR and print the build commands
#                       (for docker or another engine); builds nothing
#     --no-build        take the binaries in the build dir as they are (the test suite
#                       has just built them)
#
# Every image carries the standard OCI labels (org.opencontainers.image.*):
# title, description, version and revision (the release version and the
# commit, from its own k8s-agent's --version), created (that commit's date,
# not the build's: rebuilds of one commit are labelled alike), licenses
# (Apache-2.0) and source: $K8S_AGENT_SOURCE_URL, else the URL of the git
# remote "origin" (without any user or token in it; none for a local path),
# else no source label. And the SBOM (SPDX 2.3) of the project's binaries it
# holds, with the licence texts of what they link statically: the delivery
# image at /sbom.spdx.json and /licenses/ (the agent, k8s-agent-sshd, the
# portable sshd), worker and launcher at /usr/share/doc/k8s-agent/
# (sbom.spdx.json and licenses/: the worker's k8s-agent and k8s-agent-sshd,
# the launcher's k8s-agent; their Debian packages are in the image's dpkg
# database).
#
# An image whose inputs (Dockerfile, build arguments, labels, base image,
# staged files) are unchanged is left as it is; a new commit changes the
# labels, so it rebuilds. Builds never pull (--pull=never).
# When the base is a debian:SUITE-slim
# that podman does not have, scripts/debian-image.sh makes it from Debian's
# packages (debootstrap) and caches it. apt-get inside the builds uses the
# host's network. podman reads its settings as usual (CONTAINERS_CONF, ...).
#
# Why --arch is amd64 alone unless asked, even where the cross toolchain
# is installed: k8s-agent:TAG then stays the one plain image it always was
# (the users and tests that run or push it see no change), and a default
# run never starts the cross build (the arm64 third-party prefix and agent:
# 10 minutes and more cold) nor turns k8s-agent:TAG into a manifest list
# because of what a machine happens to have installed. The arm64 image
# is the same Dockerfile over the arm64 binaries: the cross-built agent,
# copier and k8s-agent-sshd, and the portable sshd cross-built by
# scripts/sshd_build.sh ensure aarch64; its SBOM describes those
# (scripts/lib/sbom.py ... aarch64).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="$repo/build"
tag=""
base=debian:bookworm-slim
context_only=""
no_build=0
targets=()
arches=(amd64)
a64_dir="$repo/build-aarch64"

usage() {
  awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2
  exit 2
}
die() {
  echo "images.sh: $*" >&2
  exit 1
}
log() { printf '[images %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
  --build-dir) build_dir="$(realpath -m "${2:?}")"; shift 2 ;;
  --tag) tag="${2:?}"; shift 2 ;;
  --base) base="${2:?}"; shift 2 ;;
  --context) context_only="$(realpath -m "${2:?}")"; shift 2 ;;
  --no-build) no_build=1; shift ;;
  --arch) IFS=, read -r -a arches <<<"${2:?}"; shift 2 ;;
  --aarch64-build-dir) a64_dir="$(realpath -m "${2:?}")"; shift 2 ;;
  -h | --help) usage ;;
  delivery | worker | launcher) targets+=("$1"); shift ;;
  *) echo "images.sh: unknown argument: $1" >&2; usage ;;
  esac
done
((${#targets[@]})) || targets=(delivery worker launcher)
case " ${arches[*]} " in
" amd64 " | " arm64 " | " amd64 arm64 " | " arm64 amd64 ") ;;
*) echo "images.sh: --arch ${arches[*]}: amd64, arm64 or amd64,arm64" >&2; usage ;;
esac
has() { [[ " $2 " == *" $1 "* ]]; }
# The delivery image for arm64, and anything amd64 (every worker or launcher).
want_arm64=0 want_amd64=0
has delivery "${targets[*]}" && has arm64 "${arches[*]}" && want_arm64=1
if has worker "${targets[*]}" || has launcher "${targets[*]}" ||
  { has delivery "${targets[*]}" && has amd64 "${arches[*]}"; }; then
  want_amd64=1
fi

agent="$build_dir/launcher/k8s-agent"
deliver="$build_dir/images/k8s-agent-deliver"
sshd_entry="$build_dir/launcher/k8s-agent-sshd"
a64_agent="$a64_dir/launcher/k8s-agent"
a64_deliver="$a64_dir/images/k8s-agent-deliver"
a64_sshd_entry="$a64_dir/launcher/k8s-agent-sshd"

# The binaries come from the project's own build (the one every test runs),
# built here if missing or older than the sources would make them.
build_binaries() {
  if ((no_build)); then
    [[ -x "$agent" && -x "$deliver" && -x "$sshd_entry" ]] || die "--no-build: no $agent, $deliver or $sshd_entry"
    return 0
  fi
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    [[ "$build_dir" == "$repo/build" ]] || die "no CMake build in $build_dir"
    (cd "$repo" && cmake --preset default >/dev/null) || die "cmake --preset default failed"
  fi
  cmake --build "$build_dir" --parallel "$(nproc)" --target k8s-agent k8s-agent-deliver k8s-agent-sshd >/dev/null ||
    die "building k8s-agent, k8s-agent-deliver and k8s-agent-sshd in $build_dir failed"
  [[ -x "$agent" && -x "$deliver" && -x "$sshd_entry" ]] || die "build produced no $agent, $deliver or $sshd_entry"
}

# The arm64 ones: the "aarch64" preset's cross build (the same sources and
# flags; scripts/deps.sh --aarch64 installs the toolchain and qemu-user,
# which the SBOM runs the agent's --version under).
build_arm64_binaries() {
  local b tool
  for tool in aarch64-linux-gnu-g++ aarch64-linux-gnu-strip qemu-aarch64-static; do
    command -v "$tool" >/dev/null || die "--arch arm64 needs $tool: scripts/deps.sh --aarch64"
  done
  if ((!no_build)); then
    if [[ ! -f "$a64_dir/CMakeCache.txt" ]]; then
      [[ "$a64_dir" == "$repo/build-aarch64" ]] || die "no CMake build in $a64_dir"
      (cd "$repo" && cmake --preset aarch64 >/dev/null) || die "cmake --preset aarch64 failed"
    fi
    cmake --build "$a64_dir" --parallel "$(nproc)" --target k8s-agent k8s-agent-deliver k8s-agent-sshd >/dev/null ||
      die "building the arm64 k8s-agent, k8s-agent-deliver and k8s-agent-sshd in $a64_dir failed"
  fi
  for b in "$a64_agent" "$a64_deliver" "$a64_sshd_entry"; do
    [[ -x "$b" ]] || die "no $b (cmake --build $a64_dir --target k8s-agent k8s-agent-deliver k8s-agent-sshd)"
    [[ "$(readelf -h "$b" | sed -n 's/^ *Machine: *//p')" == AArch64 ]] || die "$b is not an AArch64 binary"
  done
}

# Shared libraries the agent needs beyond glibc's own (libc, libm, the
# loader, and libpthread/libdl/librt on older glibc).
extra_libs() {
  readelf -d "$1" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]$/\1/p' |
    grep -vxE 'libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1' || true
}

# The Debian packages (of this machine) that hold those libraries: a binary
# linked against them runs only in an image of the same Debian release.
packages_of() {
  local lib path pkg found=()
  for lib in "$@"; do
    path="$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')"
    [[ -n "$path" ]] || die "k8s-agent needs $lib, which this machine does not have"
    # dpkg knows a file by the path its package installed it at: with a
    # merged /usr that is /lib/... for some, /usr/lib/... for others.
    pkg="$( (dpkg -S "$path" || dpkg -S "$(readlink -f "$path")") 2>/dev/null | head -n1 | cut -d: -f1)"
    [[ -n "$pkg" ]] || die "no Debian package holds $path (which k8s-agent needs)"
    found+=("$pkg")
  done
  printf '%s\n' "${found[@]}" | sort -u | tr '\n' ' '
}

# The build context: only what the Dockerfiles COPY. The binary is
# stripped (the debug info stays in the build tree); unchanged inputs give
# byte-identical files, so podman's layer cache makes a warm rebuild cheap.
new_context() {
  local ctx="$1"
  # Only ever delete a directory this script staged (--context may name any).
  if [[ -n "$context_only" && -e "$ctx" && ! -e "$ctx/.k8s-agent-context" ]] &&
    [[ -n "$(ls -A "$ctx" 2>/dev/null)" ]]; then
    die "$ctx exists and is not a build context staged by images.sh: name a new or empty directory"
  fi
  rm -rf "$ctx"
  mkdir -p "$ctx"
  : >"$ctx/.k8s-agent-context"
}

# stage_context DIR ARCH: the delivery image's context for amd64 (the
# project's build; it also holds the worker and launcher images' files) or
# arm64 (the "aarch64" preset's cross build, stripped by the target's
# binutils; only what the delivery image COPYs).
stage_context() {
  local ctx="$1" arch="$2" strip=strip sbom_arch=x86_64 sshd_arch=x86_64 a d e
  a="$agent" d="$deliver" e="$sshd_entry"
  if [[ "$arch" == arm64 ]]; then
    strip=aarch64-linux-gnu-strip sbom_arch=aarch64 sshd_arch=aarch64
    a="$a64_agent" d="$a64_deliver" e="$a64_sshd_entry"
  fi
  new_context "$ctx"
  "$strip" -o "$ctx/k8s-agent" "$a"
  "$strip" -o "$ctx/k8s-agent-deliver" "$d"
  # The workers' side: k8s-agent-sshd and the portable sshd (built stripped, cached).
  local sshd_dir
  sshd_dir="$("$repo/scripts/sshd_build.sh" ensure "$sshd_arch")" ||
    die "building the portable sshd ($sshd_arch) failed (see above)"
  "$strip" -o "$ctx/k8s-agent-sshd" "$e"
  cp "$sshd_dir/sshd" "$sshd_dir/sshd-session" "$sshd_dir/sshd-auth" "$ctx/"
  chmod 0755 "$ctx"/k8s-agent-sshd "$ctx"/sshd "$ctx"/sshd-session "$ctx"/sshd-auth
  cp "$repo/ompi-conf/openmpi-mca-params.conf" "$repo/ompi-conf/prte-mca-params.conf" "$repo/images/ompi-env.sh" "$ctx/"
  if [[ "$arch" == amd64 ]]; then
    cp "$repo/images/ssh-setup.sh" "$repo/images/launcher-entrypoint.sh" "$ctx/"
  fi
  chmod 0755 "$ctx"/k8s-agent "$ctx"/k8s-agent-deliver "$ctx"/*.sh
  chmod 0644 "$ctx"/*.conf
  # The delivery image's notices: the SBOM of the binaries it carries and the licences of what they link.
  /usr/bin/python3 "$repo/scripts/lib/sbom.py" "$ctx/k8s-agent" "$("$repo/scripts/third_party.sh" path "$sbom_arch")" \
    "$ctx/sbom.spdx.json" "$ctx/licenses" "$sbom_arch" "$ctx/k8s-agent-sshd" "$sshd_dir" ||
    die "writing the SBOM of $a failed"
  chmod 0755 "$ctx/licenses"
  chmod 0644 "$ctx/sbom.spdx.json" "$ctx"/licenses/*
  # Same mtimes every time: engines that hash metadata then cache as well.
  touch -h -d @0 "$ctx"/* "$ctx"/licenses/*
}

# stage_image_context NAME FILE... SPDXID...: the context of the worker or
# launcher image, DIR-NAME beside the delivery image's DIR ($ctx): the FILEs
# its Dockerfile COPYs, from DIR, and an SBOM of its own: DIR's cut down to
# the binaries it carries (the SPDXIDs) and what is linked into them, with
# those licences only (the portable sshd, its OpenSSH, zlib and libxcrypt are
# not in these images), under a namespace of its own (...-NAME: an SPDX
# document's is unique). Only these files: a change elsewhere in DIR (the
# portable sshd) is no input of this image.
stage_image_context() {
  local name="$1" dir
  [[ -n "$ctx" && -f "$ctx/sbom.spdx.json" ]] || die "no staged context with an SBOM to make the $name image's from"
  dir="$ctx-$name"
  shift
  new_context "$dir"
  while [[ $# -gt 0 && "$1" != SPDXRef-* ]]; do
    cp -p "$ctx/$1" "$dir/" || die "staging $1 for the $name image failed"
    shift
  done
  /usr/bin/python3 -c '
import json, os, re, shutil, sys
src, dst, name, roots = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
with open(os.path.join(src, "sbom.spdx.json")) as f:
    doc = json.load(f)
ids = {p["SPDXID"] for p in doc["packages"]}
if not set(roots) <= ids:
    sys.exit("images.sh: %s/sbom.spdx.json has no %s" % (src, ", ".join(sorted(set(roots) - ids))))
keep, more = set(), set(roots)
while more:  # The binaries and, transitively, what is linked into them.
    keep |= more
    more = {r["relatedSpdxElement"] for r in doc["relationships"]
            if r["relationshipType"] == "STATIC_LINK" and r["spdxElementId"] in keep} - keep
doc["packages"] = [p for p in doc["packages"] if p["SPDXID"] in keep]
doc["relationships"] = [r for r in doc["relationships"]
                        if r["spdxElementId"] in keep | {"SPDXRef-DOCUMENT"} and r["relatedSpdxElement"] in keep]
doc["documentNamespace"] += "-" + name
os.makedirs(os.path.join(dst, "licenses"))
for p in doc["packages"]:
    m = re.fullmatch(r"see licenses/([^/]+)", p.get("copyrightText", ""))
    if m:
        shutil.copy(os.path.join(src, "licenses", m.group(1)), os.path.join(dst, "licenses"))
with open(os.path.join(dst, "sbom.spdx.json"), "w") as f:
    json.dump(doc, f, indent=1, sort_keys=True)
    f.write("\n")
' "$ctx" "$dir" "$name" "$@" || die "writing the SBOM of the $name image failed"
  chmod 0755 "$dir/licenses"
  chmod 0644 "$dir/sbom.spdx.json" "$dir"/licenses/*
  # Same mtimes every time, as stage_context's.
  touch -h -d @0 "$dir"/* "$dir"/licenses/*
}

# build_info [RUNNER...] BINARY: "VERSION COMMIT DATE" from its --version
# (cmake/build_info.cmake; COMMIT and DATE "unknown" outside git).
build_info() {
  local out
  out="$("$@" --version)" || die "$* --version failed"
  awk 'NR == 1 { v = $2 } $1 == "commit" { c = $2; d = $3; gsub(/[()]/, "", d) }
    END { if (v == "") exit 1; print v, (c == "" ? "unknown" : c), (d == "" ? "unknown" : d) }' <<<"$out" ||
    die "$* --version printed no version: $out"
}

# The source label's URL: K8S_AGENT_SOURCE_URL as given, else the remote
# origin's when it is a URL (scheme://... or user@host:path), without the
# user and password of a scheme:// one (an https remote may carry a token);
# nothing else (a local path is no source to anyone else).
source_url() {
  local url
  if [[ -n "${K8S_AGENT_SOURCE_URL:-}" ]]; then
    printf '%s' "$K8S_AGENT_SOURCE_URL"
    return 0
  fi
  url="$(git -C "$repo" remote get-url origin 2>/dev/null)" || return 0
  if [[ "$url" =~ ^([a-zA-Z][a-zA-Z0-9+.-]*://)([^/@]*@)?(.+)$ ]]; then
    printf '%s%s' "${BASH_REMATCH[1]}" "${BASH_REMATCH[3]}"
  elif [[ "$url" =~ ^[^/:@]+@[^/:]+:.+ ]]; then
    printf '%s' "$url"
  fi
}

# label_args TARGET ARCH: that image's OCI labels (appended to args), from
# main's info[ARCH] ("VERSION COMMIT DATE") and source.
label_args() {
  local v c d title desc created
  read -r v c d <<<"${info[$2]}"
  case "$1" in
  delivery)
    title=k8s-agent
    desc="k8s-agent, Open MPI's remote launch agent for Kubernetes, with k8s-agent-sshd and a portable sshd, the MCA presets and a static copier, to put into other images"
    ;;
  worker)
    title=k8s-agent-worker
    desc="Open MPI worker: Debian's Open MPI, sshd on port 2222 started by k8s-agent-sshd as uid 1000, and k8s-agent"
    ;;
  launcher)
    title=k8s-agent-launcher
    desc="Open MPI launcher: Debian's Open MPI with k8s-agent as mpirun's remote launch agent, as uid 1000"
    ;;
  esac
  args+=(--label "org.opencontainers.image.title=$title" --label "org.opencontainers.image.description=$desc"
    --label "org.opencontainers.image.version=$v" --label "org.opencontainers.image.licenses=Apache-2.0")
  [[ "$c" == unknown ]] || args+=(--label "org.opencontainers.image.revision=$c")
  # RFC 3339 in UTC, as the OCI annotations have it.
  if [[ "$d" != unknown ]] && created="$(date -u -d "$d" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)"; then
    args+=(--label "org.opencontainers.image.created=$created")
  fi
  [[ -z "$source" ]] || args+=(--label "org.opencontainers.image.source=$source")
}

# image_ref TARGET ARCH: what one build is tagged.
image_ref() {
  case "$1" in
  delivery)
    if ((${#arches[@]} > 1)); then
      printf 'k8s-agent:%s-%s' "$tag" "$2"
    else
      printf 'k8s-agent:%s' "$tag"
    fi
    ;;
  *) printf 'k8s-agent-%s:%s' "$1" "$tag" ;;
  esac
}
# dockerfile TARGET ARCH
dockerfile() {
  case "$1:$2" in
  delivery:*) printf '%s/images/k8s-agent.Dockerfile' "$repo" ;;
  *) printf '%s/images/%s.Dockerfile' "$repo" "$1" ;;
  esac
}
# The builds: TARGET:ARCH, the delivery image once per --arch.
builds() {
  local t a
  for t in "${targets[@]}"; do
    if [[ "$t" == delivery ]]; then
      for a in "${arches[@]}"; do printf '%s:%s\n' "$t" "$a"; done
    else
      printf '%s:amd64\n' "$t"
    fi
  done
}

# platform_args TARGET ARCH: a per-arch delivery image names its platform
# (FROM scratch and COPY only: nothing of arm64 runs while it is built); the
# default single amd64 build keeps the arguments (and inputs) it always had.
platform_args() {
  [[ "$1" == delivery ]] || return 0
  if ((${#arches[@]} > 1)) || [[ "$2" != amd64 ]]; then
    args+=(--platform "linux/$2")
  fi
}

# The manifest list k8s-agent:TAG over the per-arch delivery images, made
# anew each time (milliseconds); a plain image of that name loses the name.
make_manifest() {
  local list="k8s-agent:$tag" a
  if podman manifest exists "$list" 2>/dev/null; then
    podman manifest rm "$list" >/dev/null || die "podman manifest rm $list failed"
  elif podman image exists "$list"; then
    podman untag "$list" "$list" || die "podman untag $list failed"
  fi
  podman manifest create "$list" >/dev/null || die "podman manifest create $list failed"
  for a in "${arches[@]}"; do
    podman manifest add "$list" "containers-storage:localhost/$(image_ref delivery "$a")" >/dev/null ||
      die "podman manifest add $list $(image_ref delivery "$a") failed"
  done
  log "manifest list $list: $(podman manifest inspect "$list" |
    /usr/bin/python3 -c 'import json, sys; print(" ".join(m["platform"]["os"] + "/" + m["platform"]["architecture"] for m in json.load(sys.stdin)["manifests"]))')"
}

main() {
  local ctx a64_ctx job target arch t0 args pkgs="" source
  local -a jobs
  local -a libs
  local -A info
  # shellcheck source=scripts/deps.sh
  source "$repo/scripts/deps.sh"
  if [[ -n "$context_only" ]]; then
    k8s_agent_install_deps binutils
  else
    k8s_agent_install_deps binutils podman debootstrap
  fi
  ((want_amd64)) && build_binaries
  ((want_arm64)) && build_arm64_binaries
  # What the images are labelled with, each its own agent's; the tag is the release version.
  ((want_amd64)) && info[amd64]="$(build_info "$agent")"
  ((want_arm64)) && info[arm64]="$(build_info qemu-aarch64-static -L /usr/aarch64-linux-gnu "$a64_agent")"
  if ((want_amd64 && want_arm64)) && [[ "${info[amd64]}" != "${info[arm64]}" ]]; then
    log "note: the amd64 and arm64 agents are of different builds: ${info[amd64]% *} and ${info[arm64]% *}"
  fi
  if [[ -z "$tag" ]]; then
    if ((want_amd64)); then tag="${info[amd64]%% *}"; else tag="${info[arm64]%% *}"; fi
    tag="${tag//+/-}"
  fi
  [[ "$tag" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "tag $tag is not an OCI tag"
  source="$(source_url)"
  if ((want_amd64)); then
    mapfile -t libs < <(extra_libs "$agent")
    if ((${#libs[@]})); then
      pkgs="$(packages_of "${libs[@]}")"
      log "note: $agent is not portable: it needs ${libs[*]} beyond glibc."
      log "      worker and launcher get them from Debian (${pkgs% }), so their base must be this"
      log "      machine's Debian release; the delivery image's agent runs only where they exist."
    fi
  fi
  if has arm64 "${arches[*]}" && { has worker "${targets[*]}" || has launcher "${targets[*]}"; }; then
    log "note: --arch ${arches[*]} is the delivery image's: worker and launcher are amd64 only"
  fi
  ctx="${context_only:-$build_dir/images/context}"
  a64_ctx="$ctx-arm64"
  ((want_amd64)) && stage_context "$ctx" amd64
  ((want_arm64)) && stage_context "$a64_ctx" arm64
  if has worker "${targets[*]}"; then
    stage_image_context worker k8s-agent k8s-agent-sshd openmpi-mca-params.conf prte-mca-params.conf \
      SPDXRef-k8s-agent SPDXRef-k8s-agent-sshd
  fi
  if has launcher "${targets[*]}"; then
    stage_image_context launcher k8s-agent ssh-setup.sh ompi-env.sh launcher-entrypoint.sh \
      openmpi-mca-params.conf prte-mca-params.conf SPDXRef-k8s-agent
  fi
  # context_of TARGET:ARCH
  context_of() {
    case "$1" in
    delivery:arm64) printf '%s' "$a64_ctx" ;;
    delivery:*) printf '%s' "$ctx" ;;
    *) printf '%s-%s' "$ctx" "${1%:*}" ;;
    esac
  }

  mapfile -t jobs < <(builds)
  if [[ -n "$context_only" ]]; then
    for job in "${jobs[@]}"; do
      target="${job%:*}" arch="${job#*:}"
      args=(-f "$(dockerfile "$target" "$arch")" -t "$(image_ref "$target" "$arch")")
      platform_args "$target" "$arch"
      label_args "$target" "$arch"
      [[ "$target" == delivery ]] || args+=(--build-arg "DEBIAN_IMAGE=$base")
      [[ "$target" == delivery || -z "$pkgs" ]] || args+=(--build-arg "AGENT_PACKAGES=${pkgs% }")
      printf 'docker build'
      printf ' %q' "${args[@]}" "$(context_of "$target:$arch")"
      printf '\n'
    done
    if has delivery "${targets[*]}" && ((${#arches[@]} > 1)); then
      printf '# then, once both are pushed: docker manifest create k8s-agent:%s' "$tag"
      for arch in "${arches[@]}"; do printf ' k8s-agent:%s-%s' "$tag" "$arch"; done
      printf '\n'
    fi
    return 0
  fi

  command -v podman >/dev/null || die "podman missing: apt-get install podman (or use --context with another engine)"
  [[ $EUID -eq 0 ]] || die "run as root (sudo): images go to root's podman store"
  if [[ " ${targets[*]} " == *" worker "* || " ${targets[*]} " == *" launcher "* ]]; then
    if ! podman image exists "$base"; then
      [[ "$base" =~ ^(docker\.io/(library/)?)?debian:([a-z]+)-slim$ ]] ||
        die "base image $base is not in podman's store and not a debian:SUITE-slim this script can make: podman pull it first"
      bash "$repo/scripts/debian-image.sh" "${BASH_REMATCH[3]}" "$base"
    fi
  fi
  local name inputs log bctx
  for job in "${jobs[@]}"; do
    target="${job%:*}" arch="${job#*:}"
    t0=$SECONDS
    name="$(image_ref "$target" "$arch")"
    bctx="$(context_of "$target:$arch")"
    log="$build_dir/images/$target.log"
    [[ "$target" != delivery ]] || ((${#arches[@]} == 1)) || log="$build_dir/images/$target-$arch.log"
    args=(--pull=never --layers -f "$(dockerfile "$target" "$arch")" -t "$name")
    platform_args "$target" "$arch"
    label_args "$target" "$arch"
    if [[ "$target" != delivery ]]; then
      # apt-get runs inside these builds: the host's network.
      args+=(--network=host --build-arg "DEBIAN_IMAGE=$base" --build-arg "AGENT_PACKAGES=${pkgs% }")
    fi
    # Everything the image is made of: when an image of that name carries
    # the same digest, even podman's cached rebuild (seconds) is skipped.
    inputs="$(
      {
        cat "$(dockerfile "$target" "$arch")"
        printf '%s\n' "${args[@]}"
        [[ "$target" == delivery ]] || podman image inspect -f '{{.Id}}' "$base"
        (cd "$bctx" && find . -type f ! -name .k8s-agent-context -print0 | LC_ALL=C sort -z | xargs -0 sha256sum --)
      } | sha256sum | cut -c1-16
    )"
    if [[ "$(podman image inspect -f '{{index .Labels "org.k8s-agent.inputs"}}' "$name" 2>/dev/null)" == "$inputs" ]]; then
      echo "up to date: $name (inputs $inputs)" >"$log"
      log "$name is up to date"
      continue
    fi
    args+=(--label "org.k8s-agent.inputs=$inputs")
    # A manifest list of that name (an earlier --arch amd64,arm64) goes: a
    # build would only take its name and leave it behind without one.
    if podman manifest exists "$name" 2>/dev/null; then
      podman manifest rm "$name" >/dev/null || die "podman manifest rm $name failed"
    fi
    log "building $name (log $log)"
    if ! podman build "${args[@]}" "$bctx" >"$log" 2>&1; then
      tail -n 25 "$log" >&2
      die "podman build of $name failed: podman build ${args[*]} $bctx"
    fi
    log "built $name in $((SECONDS - t0)) s ($(podman image inspect --format '{{.Size}}' "$name" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
  done
  if has delivery "${targets[*]}" && ((${#arches[@]} > 1)); then
    make_manifest
  fi
}

main
