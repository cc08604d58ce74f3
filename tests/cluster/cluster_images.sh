#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Images for the cluster tier's containerd (namespace k8s.io, the CRI's), which has no registry to pull from:
#   pause STATE     k8sa.local/pause:1, busybox-static's sleep (the pods' sandbox; containerd's sandbox_image)
#   project STATE   the project's own images (scripts/images.sh: k8s-agent, k8s-agent-worker,
#                   k8s-agent-launcher), saved from podman and imported, also under TAG "cluster" as kubelet
#                   names them (docker.io/library/NAME:cluster): a tag other than latest, so the manifests'
#                   default imagePullPolicy is IfNotPresent and nothing is ever pulled
#   stock STATE     k8sa.local/stock:1, the unchanged Debian 13 minbase root with Open MPI and no OpenSSH
#                   (tests/bed/minbase_root.sh): the "user's own image" of the init-container delivery;
#                   and k8sa.local/stock-anyuid:1, the same with /etc/passwd group-writable (mode 0664, group
#                   0), as OpenShift-style images make it for an arbitrary uid
# containerd's socket: STATE/host/run/containerd/containerd.sock (tests/cluster/cluster_lib.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
mode="$1" state="$2"
ctr_() { ctr --address "$state/host/run/containerd/containerd.sock" -n k8s.io "$@"; }
tmp="$(mktemp -d "$state/images.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

case "$mode" in
pause)
  mkdir -p "$tmp/root/bin"
  cp "$(command -v busybox)" "$tmp/root/bin/busybox"
  # PID 1 ignores signals it has no handler for; containerd stops a sandbox with SIGKILL anyway.
  /usr/bin/python3 "$here/image_archive.py" "$tmp/root" k8sa.local/pause:1 "$tmp/pause.tar" \
    --entrypoint '["/bin/busybox", "sleep", "2147483647"]' >/dev/null
  ctr_ images import "$tmp/pause.tar" >/dev/null
  ;;
project)
  for name in k8s-agent k8s-agent-worker k8s-agent-launcher; do
    podman image exists "localhost/$name:latest" || { echo "no podman image $name: run scripts/images.sh" >&2; exit 1; }
    podman save -q --format docker-archive -o "$tmp/$name.tar" "localhost/$name:latest" >/dev/null
    ctr_ images import "$tmp/$name.tar" >/dev/null
    rm -f "$tmp/$name.tar"
    ctr_ images tag --force "localhost/$name:latest" "docker.io/library/$name:cluster" >/dev/null
  done
  ;;
stock)
  root="$("$repo/tests/bed/minbase_root.sh" path)"
  "$repo/tests/bed/minbase_root.sh" check || { echo "no minbase root: tests/bed/minbase_root.sh ensure" >&2; exit 1; }
  /usr/bin/python3 "$here/image_archive.py" "$root" k8sa.local/stock:1 "$tmp/stock.tar" --cmd '["bash"]' \
    --also k8sa.local/stock-anyuid:1 --chmod etc/passwd=0664 >/dev/null
  ctr_ images import "$tmp/stock.tar" >/dev/null
  ;;
*)
  sed -n '3,11p' "$0" >&2
  exit 2
  ;;
esac
