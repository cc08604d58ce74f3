#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `scripts/demo.sh --cluster`: the demo on a real single-node Kubernetes v1.20.2 (kubelet, containerd,
# controllers, kube-proxy: tests/cluster/cluster_lib.sh), with the project's images and its kustomize base.
# A job of N workers is applied with kubectl; mpirun starts in the launcher pod while the workers are still
# being created; the pods are shown as they come up, then mpirun's output and the launch report.
#
# usage: demo_cluster.sh BUILD_DIR WORKERS
# The first run builds Kubernetes from Debian's source (~13 min on 2 cores) and the images (~5 min), saying
# so before it starts; later runs take about a minute.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$1" WORKERS="$2"
if [[ -t 1 ]]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD='' PLAIN=''; fi
say() { printf '%s==> %s%s\n' "$BOLD" "$*" "$PLAIN"; }
die() {
  echo "demo: $*" >&2
  exit 1
}

# shellcheck source=scripts/deps.sh
source "$REPO/scripts/deps.sh"
k8s_agent_install_deps podman runc debootstrap containerd containernetworking-plugins iptables conntrack \
  busybox-static || die "installing packages failed"

CL_STATE="$BUILD/demo-cluster"
# shellcheck source=tests/cluster/cluster_lib.sh
source "$REPO/tests/cluster/cluster_lib.sh"
if ! "$REPO/tests/realapi/apiserver_build.sh" check; then
  say "first run: building Kubernetes v1.20.2 from Debian's source package (~13 min on 2 cores, cached in"
  say "$(dirname "$CL_KUBE")), then the images (~5 min)"
  "$REPO/tests/realapi/apiserver_build.sh" ensure >/dev/null || die "building Kubernetes failed"
fi
# This machine's podman settings (runc; rlimits within the hard limits), as the image tests use them.
# shellcheck source=tests/images/podman_conf.sh
source "$REPO/tests/images/podman_conf.sh"
podman_test_conf "$BUILD/demo-podman"
say "building the images (scripts/images.sh: unchanged ones are kept)"
bash "$REPO/scripts/images.sh" --build-dir "$BUILD" --tag latest delivery worker launcher >"$BUILD/demo-images.log" 2>&1 ||
  { tail -20 "$BUILD/demo-images.log"; die "scripts/images.sh failed (log $BUILD/demo-images.log)"; }

cat <<'EOF'
k8s-agent replaces ssh as Open MPI's remote launch agent on Kubernetes. mpirun calls it as
`k8s-agent HOST orted ...`; it finds the pod named HOST through the Kubernetes API, waits (watching,
not polling) until the pod is Running with an IP and its sshd completes a handshake, then starts the
command there over SSH. So the launcher can start together with its workers.
EOF
trap 'say "stopping the cluster"; cl_down' EXIT
say "starting a single-node Kubernetes (etcd, kube-apiserver, controller-manager, scheduler, kubelet,"
say "containerd, kube-proxy) in a network namespace of its own"
t0=$SECONDS
cl_up >"$BUILD/demo-cluster.log" 2>&1 || { cat "$BUILD/demo-cluster.log"; die "the cluster did not start"; }
bash "$REPO/tests/cluster/cluster_images.sh" project "$CL_STATE" || die "importing the images failed"
say "node Ready after $(cat "$CL_STATE/node-ready-seconds") s; images imported after $((SECONDS - t0)) s"

ns=demo
work="$CL_STATE/work/demo"
mkdir -p "$work"
cl_kubectl create namespace "$ns" >/dev/null || die "creating namespace $ns"
cl_secret "$ns" "$work/keys" || die "creating the Secret mpi-ssh"
# The base with WORKERS workers, their hostfile, and a launcher that writes the agents' trace and reports.
hosts=""
for ((i = 0; i < WORKERS; i++)); do hosts+="    mpi-worker-$i slots=1"$'\n'; done
cat >"$work/workers.yaml" <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: mpi-worker}
spec: {replicas: $WORKERS}
EOF
cat >"$work/hostfile.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata: {name: mpi-hostfile}
data:
  hostfile: |
$hosts
EOF
cat >"$work/launcher.yaml" <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: mpi-launcher}
spec:
  template:
    spec:
      containers:
        - name: launcher
          args: ["bash", "-c", "K8S_AGENT_TRACE=/tmp/trace.jsonl mpirun --hostfile /etc/mpi/hostfile -n $WORKERS hostname; rc=\$?; echo; echo '==> where the start-up time went: k8s-agent --report'; k8s-agent -q --report /tmp/trace.jsonl; exit \$rc"]
EOF
overlay="$(cl_overlay "$ns" "$work/overlay" "$work/workers.yaml" "$work/hostfile.yaml" "$work/launcher.yaml")"
say "kubectl apply -k images/k8s (the project's kustomize base: $WORKERS workers, the launcher Job, RBAC)"
t0=$SECONDS
cl_kubectl -n "$ns" apply -k "$overlay" | sed 's/^/    /'
say "kubectl get pods -o wide, as the pods come up (the launcher does not wait for the workers):"
last=""
while :; do
  done_="$(cl_kubectl -n "$ns" get job mpi-launcher -o 'jsonpath={.status.succeeded}{.status.failed}' 2>/dev/null)"
  now="$(cl_kubectl -n "$ns" get pods -o wide 2>/dev/null | awk '{print $1, $2, $3, $4, $6}' | column -t)"
  if [[ "$now" != "$last" ]]; then
    printf '  [+%3d s]\n' "$((SECONDS - t0))"
    printf '    %s\n' "${now//$'\n'/$'\n'    }"
    last="$now"
  fi
  [[ -n "$done_" ]] && break
  ((SECONDS - t0 < 300)) || die "the launcher Job did not finish in 300 s"
  sleep 0.5
done
say "the launcher pod's output (mpirun, then the report), $((SECONDS - t0)) s after kubectl apply:"
cl_kubectl -n "$ns" logs job/mpi-launcher | sed 's/^/    /'
rc=0
[[ "$(cl_kubectl -n "$ns" get job mpi-launcher -o 'jsonpath={.status.succeeded}')" == 1 ]] || rc=1
if ((rc == 0)); then say "done: $WORKERS ranks ran on pods that did not exist when the job was applied"; fi
exit "$rc"
