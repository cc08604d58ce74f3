#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A 4-worker MPI job on the real single-node Kubernetes (tests/cluster/cluster_lib.sh), from `kubectl apply`
# to mpirun's exit, launched two ways in one run, alternating, each round in a fresh namespace:
#   agent   the project's kustomize base (images/k8s) as it ships: the launcher Job starts together with the
#           StatefulSet, and k8s-agent waits for each worker when mpirun needs it
#   ready   the way mpi-operator's `launcherCreationPolicy: WaitForWorkersReady` does it: the same workers
#           first; when every worker pod is Ready, the launcher Job, whose mpirun uses plain OpenSSH (the
#           names through hostAliases: the cluster has no DNS, where mpi-operator's would answer). Twice:
#           with the base's readiness probe (tcpSocket on sshd, periodSeconds 10) and with periodSeconds 1
#           (the best case for this policy: Ready within a second of sshd listening)
# Both are timed the same way: from just before `kubectl apply` to `kubectl wait --for=condition=complete`
# returning (a watch). Also: node Ready after the cluster's start, and pod created -> Running.
# usage: sudo bench/cluster.sh [--rounds N] [--out FILE]   (default 5; bench/results/cluster.md)
# Needs root, the Kubernetes cache (tests/realapi/apiserver_build.sh) and the images (scripts/images.sh).
set -uo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$BENCH_DIR/.." && pwd)"
ROUNDS=5
OUT="$BENCH_DIR/results/cluster.md"
while (($#)); do
  case "$1" in
  --rounds) ROUNDS="$2"; shift ;;
  --out) OUT="$2"; shift ;;
  *) sed -n '3,16p' "$0" >&2; exit 2 ;;
  esac
  shift
done
[[ $EUID -eq 0 ]] || { echo "bench/cluster.sh: needs root" >&2; exit 1; }
CL_STATE="$REPO/build/bench-cluster"
# shellcheck source=tests/cluster/cluster_lib.sh
source "$REPO/tests/cluster/cluster_lib.sh"
why="$(cl_unavailable)"
[[ -z "$why" ]] || { echo "bench/cluster.sh: $why" >&2; exit 1; }
trap cl_down EXIT
cl_up >"$CL_STATE.log" 2>&1 || { cat "$CL_STATE.log"; exit 1; }
bash "$REPO/tests/cluster/cluster_images.sh" project "$CL_STATE" || exit 1
WORK="$CL_STATE/work"
mkdir -p "$WORK"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
k() { cl_kubectl -n "$NS" "$@"; }

# The base's overlay: 4 workers, their hostfile, mpirun -n 4.
cat >"$WORK/workers.yaml" <<'EOF'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: mpi-worker}
spec: {replicas: 4}
EOF
cat >"$WORK/hostfile.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: mpi-hostfile}
data:
  hostfile: |
    mpi-worker-0 slots=1
    mpi-worker-1 slots=1
    mpi-worker-2 slots=1
    mpi-worker-3 slots=1
EOF
cat >"$WORK/launcher.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: mpi-launcher}
spec:
  template:
    spec:
      containers:
        - name: launcher
          args: ["mpirun", "--hostfile", "/etc/mpi/hostfile", "-n", "4", "hostname"]
EOF

# agent: everything at once.
run_agent() {
  local overlay t0
  overlay="$(cl_overlay "$NS" "$WORK/$NS" "$WORK/workers.yaml" "$WORK/hostfile.yaml" "$WORK/launcher.yaml")"
  t0=$(now_ms)
  k apply -k "$overlay" >/dev/null || return 1
  k wait --for=condition=complete job/mpi-launcher --timeout=300s >/dev/null || return 1
  echo $(($(now_ms) - t0))
}

# ready PERIOD: the workers (the base without its launcher, the probe at PERIOD s); when all 4 are Ready, the
# launcher with OpenSSH as Open MPI's agent and the workers' IPs in /etc/hosts.
run_ready() {
  local period="$1" d="$WORK/$NS" t0 aliases="" i ip
  mkdir -p "$d/base"
  cp "$REPO"/images/k8s/{serviceaccount,role,rolebinding,service,hostfile-configmap,worker-statefulset}.yaml "$d/base/"
  sed -i "s/periodSeconds: 10/periodSeconds: $period/" "$d/base/worker-statefulset.yaml"
  grep -q "periodSeconds: $period" "$d/base/worker-statefulset.yaml" || { echo "no readiness period in the base" >&2; return 1; }
  printf 'resources: [serviceaccount.yaml, role.yaml, rolebinding.yaml, service.yaml, hostfile-configmap.yaml, worker-statefulset.yaml]\n' \
    >"$d/base/kustomization.yaml"
  cp "$WORK/workers.yaml" "$WORK/hostfile.yaml" "$d/"
  printf 'namespace: %s\nbases: [base]\nimages: [{name: k8s-agent-worker, newTag: cluster}]\npatchesStrategicMerge: [workers.yaml, hostfile.yaml]\n' \
    "$NS" >"$d/kustomization.yaml"
  t0=$(now_ms)
  k apply -k "$d" >/dev/null || return 1
  until [[ "$(k get pods -l app.kubernetes.io/name=mpi-worker -o name 2>/dev/null | wc -l)" == 4 ]]; do sleep 0.1; done
  k wait --for=condition=Ready pod -l app.kubernetes.io/name=mpi-worker --timeout=300s >/dev/null || return 1
  for i in 0 1 2 3; do
    ip="$(k get pod "mpi-worker-$i" -o jsonpath='{.status.podIP}')"
    aliases+="        - {ip: \"$ip\", hostnames: [mpi-worker-$i]}"$'\n'
  done
  k apply -f - >/dev/null <<EOF || return 1
apiVersion: batch/v1
kind: Job
metadata: {name: mpi-launcher}
spec:
  backoffLimit: 0
  template:
    spec:
      serviceAccountName: mpi-launcher
      restartPolicy: Never
      securityContext: {runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, fsGroup: 1000}
      hostAliases:
$aliases
      containers:
        - name: launcher
          image: k8s-agent-launcher:cluster
          env:
            - {name: OMPI_MCA_plm_rsh_agent, value: ssh}
            - {name: WORKER_HOST_PATTERN, value: "mpi-worker-*"}
          args: ["mpirun", "--hostfile", "/etc/mpi/hostfile", "-n", "4", "hostname"]
          volumeMounts:
            - {name: ssh-secret, mountPath: /etc/ssh-secret, readOnly: true}
            - {name: hostfile, mountPath: /etc/mpi, readOnly: true}
      volumes:
        - {name: ssh-secret, secret: {secretName: mpi-ssh, defaultMode: 0440}}
        - {name: hostfile, configMap: {name: mpi-hostfile}}
EOF
  k wait --for=condition=complete job/mpi-launcher --timeout=300s >/dev/null || return 1
  echo $(($(now_ms) - t0))
}

# Pod created -> Running: the workers' own timestamps (whole seconds) are too coarse; poll a bare pod.
pod_running_ms() {
  local t0
  t0=$(now_ms)
  k run "p$1" --image=k8sa.local/pause:1 --restart=Never >/dev/null || return 1
  until [[ "$(k get pod "p$1" -o jsonpath='{.status.phase}')" == Running ]]; do sleep 0.05; done
  echo $(($(now_ms) - t0))
}

declare -A RES
for ((r = 1; r <= ROUNDS; r++)); do
  for way in agent ready10 ready1 pod; do
    NS="b$r-$way"
    cl_kubectl create namespace "$NS" >/dev/null
    until k get serviceaccount default >/dev/null 2>&1; do sleep 0.1; done
    cl_secret "$NS" "$WORK/$NS-keys" || exit 1
    case "$way" in
    agent) ms="$(run_agent)" ;;
    ready10) ms="$(run_ready 10)" ;;
    ready1) ms="$(run_ready 1)" ;;
    pod) ms="$(pod_running_ms "$r")" ;;
    esac
    [[ -n "$ms" ]] || { echo "round $r $way failed" >&2; k get pods -o wide >&2; exit 1; }
    [[ "$way" == pod ]] || k logs job/mpi-launcher | sort | tr '\n' ' ' | grep -q 'mpi-worker-0 mpi-worker-1 mpi-worker-2 mpi-worker-3' ||
      { echo "round $r $way: not every rank ran" >&2; exit 1; }
    RES[$way]+="$ms "
    echo "round $r $way: $ms ms" >&2
    cl_kubectl delete namespace "$NS" --wait=true --timeout=120s >/dev/null 2>&1
  done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
a="$(median <<<"${RES[agent]}")" r10="$(median <<<"${RES[ready10]}")" r1="$(median <<<"${RES[ready1]}")"
p="$(median <<<"${RES[pod]}")"
{
  echo "# A 4-worker job on the real single-node cluster: k8s-agent vs WaitForWorkersReady"
  echo
  echo "bench/cluster.sh, $(date -u +%Y-%m-%d), $ROUNDS rounds alternating, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Kubernetes v1.20.2 (kubelet, containerd 1.6, controllers, kube-proxy), node Ready $(cat "$CL_STATE/node-ready-seconds") s after start."
  echo "From just before \`kubectl apply\` to \`kubectl wait --for=condition=complete\` of the launcher Job (ms):"
  echo
  echo "| way | median | runs | ratio agent / way |"
  echo "|---|---|---|---|"
  echo "| k8s-agent (launcher with the workers) | $a | ${RES[agent]}| 1.00x |"
  echo "| WaitForWorkersReady + ssh, probe period 10 s (the base's) | $r10 | ${RES[ready10]}| $(awk -v a="$a" -v b="$r10" 'BEGIN{printf "%.2fx", a/b}') |"
  echo "| WaitForWorkersReady + ssh, probe period 1 s | $r1 | ${RES[ready1]}| $(awk -v a="$a" -v b="$r1" 'BEGIN{printf "%.2fx", a/b}') |"
  echo
  echo "Pod created -> Running (a bare pause pod, polled): median $p ms (${RES[pod]})."
} | tee "$OUT"
