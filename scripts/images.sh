#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the container images with podman, from the k8s-agent built on this
# machine (built first if missing; never compiled inside an image). Installs
# the Debian packages it lacks (podman, debootstrap, the build's own):
#   k8s-agent           delivery image: the binary, the MCA presets and a
#                       static copier, to put the agent into any image
#   k8s-agent-worker    Debian + Open MPI + sshd on 2222 as uid 1000
#   k8s-agent-launcher  Debian + Open MPI's mpirun, k8s-agent as its agent
#
#   sudo scripts/images.sh [options] [delivery|worker|launcher]...   (default: all three)
#     --build-dir DIR   where k8s-agent and k8s-agent-deliver are built (default build/)
#     --tag TAG         image tag (default latest)
#     --base IMAGE      Debian base of worker and launcher (default debian:bookworm-slim)
#     --context DIR     only stage the build context in DIR and print the build commands
#                       (for docker or another engine); builds nothing
#     --no-build        take the binaries in the build dir as they are (the test suite
#                       has just built them)
#
# An image whose inputs (Dockerfile, build arguments, base image, staged
# files) are unchanged is left as it is. Builds never pull (--pull=never).
# When the base is a debian:SUITE-slim
# that podman does not have, scripts/debian-image.sh makes it from Debian's
# packages (debootstrap) and caches it. apt-get inside the builds uses the
# host's network. podman reads its settings as usual (CONTAINERS_CONF, ...).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="$repo/build"
tag=latest
base=debian:bookworm-slim
context_only=""
no_build=0
targets=()

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
  -h | --help) usage ;;
  delivery | worker | launcher) targets+=("$1"); shift ;;
  *) echo "images.sh: unknown argument: $1" >&2; usage ;;
  esac
done
((${#targets[@]})) || targets=(delivery worker launcher)

agent="$build_dir/launcher/k8s-agent"
deliver="$build_dir/images/k8s-agent-deliver"
sshd_entry="$build_dir/launcher/k8s-agent-sshd"

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
stage_context() {
  local ctx="$1"
  # Only ever delete a directory this script staged (--context may name any).
  if [[ -n "$context_only" && -e "$ctx" && ! -e "$ctx/.k8s-agent-context" ]] &&
    [[ -n "$(ls -A "$ctx" 2>/dev/null)" ]]; then
    die "$ctx exists and is not a build context staged by images.sh: name a new or empty directory"
  fi
  rm -rf "$ctx"
  mkdir -p "$ctx"
  : >"$ctx/.k8s-agent-context"
  strip -o "$ctx/k8s-agent" "$agent"
  strip -o "$ctx/k8s-agent-deliver" "$deliver"
  # The workers' side: k8s-agent-sshd and the portable sshd (built stripped, cached).
  local sshd_dir
  sshd_dir="$("$repo/scripts/sshd_build.sh" ensure)" || die "building the portable sshd failed (see above)"
  strip -o "$ctx/k8s-agent-sshd" "$sshd_entry"
  cp "$sshd_dir/sshd" "$sshd_dir/sshd-session" "$sshd_dir/sshd-auth" "$ctx/"
  chmod 0755 "$ctx"/k8s-agent-sshd "$ctx"/sshd "$ctx"/sshd-session "$ctx"/sshd-auth
  cp "$repo/ompi-conf/openmpi-mca-params.conf" "$repo/ompi-conf/prte-mca-params.conf" \
    "$repo/images/ssh-setup.sh" "$repo/images/worker-entrypoint.sh" \
    "$repo/images/launcher-entrypoint.sh" "$repo/images/ompi-env.sh" "$ctx/"
  chmod 0755 "$ctx"/k8s-agent "$ctx"/k8s-agent-deliver "$ctx"/*.sh
  chmod 0644 "$ctx"/*.conf
  # The delivery image's notices: the SBOM of the agent it carries and the licences of what that links.
  /usr/bin/python3 "$repo/scripts/lib/sbom.py" "$ctx/k8s-agent" "$("$repo/scripts/third_party.sh" path)" \
    "$ctx/sbom.spdx.json" "$ctx/licenses" x86_64 "$ctx/k8s-agent-sshd" "$sshd_dir" || die "writing the SBOM of $agent failed"
  chmod 0755 "$ctx/licenses"
  chmod 0644 "$ctx/sbom.spdx.json" "$ctx"/licenses/*
  # Same mtimes every time: engines that hash metadata then cache as well.
  touch -h -d @0 "$ctx"/* "$ctx"/licenses/*
}

image_name() {
  case "$1" in
  delivery) printf 'k8s-agent' ;;
  *) printf 'k8s-agent-%s' "$1" ;;
  esac
}
dockerfile() {
  case "$1" in
  delivery) printf '%s/images/k8s-agent.Dockerfile' "$repo" ;;
  *) printf '%s/images/%s.Dockerfile' "$repo" "$1" ;;
  esac
}

main() {
  local ctx target t0 args pkgs=""
  local -a libs
  # shellcheck source=scripts/deps.sh
  source "$repo/scripts/deps.sh"
  if [[ -n "$context_only" ]]; then
    k8s_agent_install_deps binutils
  else
    k8s_agent_install_deps binutils podman debootstrap
  fi
  build_binaries
  mapfile -t libs < <(extra_libs "$agent")
  if ((${#libs[@]})); then
    pkgs="$(packages_of "${libs[@]}")"
    log "note: $agent is not portable: it needs ${libs[*]} beyond glibc."
    log "      worker and launcher get them from Debian (${pkgs% }), so their base must be this"
    log "      machine's Debian release; the delivery image's agent runs only where they exist."
  fi
  ctx="${context_only:-$build_dir/images/context}"
  stage_context "$ctx"

  if [[ -n "$context_only" ]]; then
    for target in "${targets[@]}"; do
      args=(-f "$(dockerfile "$target")" -t "$(image_name "$target"):$tag")
      [[ "$target" == delivery ]] || args+=(--build-arg "DEBIAN_IMAGE=$base")
      [[ "$target" == delivery || -z "$pkgs" ]] || args+=(--build-arg "AGENT_PACKAGES=${pkgs% }")
      printf 'docker build'
      printf ' %q' "${args[@]}" "$ctx"
      printf '\n'

    done
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
  local name inputs log
  for target in "${targets[@]}"; do
    t0=$SECONDS
    name="$(image_name "$target"):$tag"
    log="$build_dir/images/$target.log"
    args=(--pull=never --layers -f "$(dockerfile "$target")" -t "$name")
    if [[ "$target" != delivery ]]; then
      # apt-get runs inside these builds: the host's network.
      args+=(--network=host --build-arg "DEBIAN_IMAGE=$base" --build-arg "AGENT_PACKAGES=${pkgs% }")
    fi
    # Everything the image is made of: when an image of that name carries
    # the same digest, even podman's cached rebuild (seconds) is skipped.
    inputs="$(
      {
        cat "$(dockerfile "$target")"
        printf '%s\n' "${args[@]}"
        [[ "$target" == delivery ]] || podman image inspect -f '{{.Id}}' "$base"
        (cd "$ctx" && find . -type f ! -name .k8s-agent-context -print0 | LC_ALL=C sort -z | xargs -0 sha256sum --)
      } | sha256sum | cut -c1-16
    )"
    if [[ "$(podman image inspect -f '{{index .Labels "org.k8s-agent.inputs"}}' "$name" 2>/dev/null)" == "$inputs" ]]; then
      echo "up to date: $name (inputs $inputs)" >"$log"
      log "$name is up to date"
      continue
    fi
    args+=(--label "org.k8s-agent.inputs=$inputs")
    log "building $name (log $log)"
    if ! podman build "${args[@]}" "$ctx" >"$log" 2>&1; then
      tail -n 25 "$log" >&2
      die "podman build of $name failed: podman build ${args[*]} $ctx"
    fi
    log "built $name in $((SECONDS - t0)) s ($(podman image inspect --format '{{.Size}}' "$name" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
  done
}

main
