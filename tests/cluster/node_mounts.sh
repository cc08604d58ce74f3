#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The cluster node's mount namespace (tests/cluster/cluster_lib.sh starts this under
# `unshare --mount --propagation private`): binds STATE/host/PATH over each PATH (kubelet's, containerd's and
# libcni's fixed host paths, and /run/netns for the pods' netns files), so what they write there is the state
# dir's and what they mount vanishes with this namespace; then holds the namespace until it is killed.
# containerd, kubelet and kube-proxy join it with nsenter.
#
# usage: node_mounts.sh STATE PATH...
set -euo pipefail
state="$1"
shift
for path in "$@" /run/netns; do
  mkdir -p "$state/host$path"
  mount --bind "$state/host$path" "$path"
done
: >"$state/mounts-ready"
exec sleep infinity
