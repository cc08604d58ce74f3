#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Demo: mpirun launches an MPI job on a simulated Kubernetes cluster through k8s-agent, before the pods are ready.
#
# usage: sudo ./scripts/demo.sh [--workers N] [--build-dir DIR] [--agent PATH] [--np N]
#        sudo ./scripts/demo.sh --cluster [--workers N] [--build-dir DIR]
#
# What it does: installs missing Debian packages (apt-get, only when missing), builds k8s-agent if needed,
# starts a throw-away cluster (each pod a network namespace with its own sshd and hostname, plus a fake
# Kubernetes API server over TLS), starts `mpirun --mca plm_rsh_agent k8s-agent` while the worker pods are
# still Pending / starting, makes them ready at staggered times (one pod Running long before its sshd
# accepts connections), prints the ranks' output, a per-host timeline from k8s-agent's --trace and the launch
# report (k8s-agent --report: phases per host, critical path; SVG Gantt chart and Chrome trace written to
# BUILD/demo-report/), and removes everything it made. Needs root (network namespaces) and about 10 seconds.
# --cluster: the same on a real single-node Kubernetes (scripts/lib/demo_cluster.sh): kubectl apply -k of the
# project's manifests, the pods as they come up, mpirun's output and the report; about a minute warm.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ORIG_ARGS=("$@")
WORKERS=4
BUILD="$REPO/build"
AGENT=""
NP=""
CLUSTER=0

usage() {
  sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}
while [[ $# -gt 0 ]]; do
  case "$1" in
  --workers) WORKERS="$2"; shift 2 ;;
  --build-dir) BUILD="$2"; shift 2 ;;
  --agent) AGENT="$2"; shift 2 ;;
  --np) NP="$2"; shift 2 ;;
  --cluster) CLUSTER=1; shift ;;
  -h | --help) usage 0 ;;
  *) echo "demo: unknown argument $1" >&2; usage 2 ;;
  esac
done
if ! [[ "$WORKERS" =~ ^[0-9]+$ ]] || ((WORKERS < 2 || WORKERS > 60)); then
  echo "demo: --workers must be 2..60" >&2
  exit 2
fi
NP="${NP:-$WORKERS}"
# mpirun resolves the agent from the launcher pod's cwd: paths must be absolute.
BUILD="$(realpath -m "$BUILD")"
[[ -n "$AGENT" ]] && AGENT="$(realpath -m "$AGENT")"

if [[ $EUID -ne 0 ]]; then
  command -v sudo >/dev/null && exec sudo -- "$0" "${ORIG_ARGS[@]}"
  echo "demo: needs root (network namespaces); run it with sudo" >&2
  exit 1
fi

((CLUSTER)) && exec bash "$REPO/scripts/lib/demo_cluster.sh" "$BUILD" "$WORKERS"

T0_MS=0
if [[ -t 1 ]]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD='' PLAIN=''; fi
say() { printf '%s==> %s%s\n' "$BOLD" "$*" "$PLAIN"; }
event() { printf '  [+%5.2fs] %s\n' "$(awk -v n="$(($(date +%s%N) / 1000000 - T0_MS))" 'BEGIN{print n/1000}')" "$*"; }

# 1. Packages (only the missing ones): the same list the test command uses.
# shellcheck source=deps.sh
source "$REPO/scripts/deps.sh"
k8s_agent_install_deps || { echo "demo: installing packages failed" >&2; exit 1; }

# 2. Build (configure once, then an incremental build of the agent only).
if [[ -z "$AGENT" ]]; then
  AGENT="$BUILD/launcher/k8s-agent"
  if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
    say "configuring the build in $BUILD"
    cmake -S "$REPO" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || { echo "demo: cmake configure failed" >&2; exit 1; }
  fi
  say "building k8s-agent"
  cmake --build "$BUILD" -j2 --target k8s-agent >"$BUILD/demo-build.log" 2>&1 ||
    { tail -30 "$BUILD/demo-build.log"; echo "demo: build failed (log: $BUILD/demo-build.log)" >&2; exit 1; }
fi
[[ -x "$AGENT" ]] || { echo "demo: no k8s-agent at $AGENT" >&2; exit 1; }

cat <<'EOF'
k8s-agent replaces ssh as Open MPI's remote launch agent on Kubernetes. mpirun calls it as
`k8s-agent HOST orted ...`; it finds the pod named HOST through the Kubernetes API, waits (watching,
not polling) until the pod is Running with an IP and its sshd completes a handshake, then starts the
command there over SSH. So mpirun can start while the worker pods are still coming up.
EOF

# 3. The simulated cluster.
export BED_CACHE="$BUILD/bed-cache"
# shellcheck source=../tests/bed/bed.sh
. "$REPO/tests/bed/bed.sh"
say "starting a simulated Kubernetes cluster: $WORKERS worker pods + launcher pod + API server"
BED_QUIET=1 bed_up "$WORKERS" || { echo "demo: could not start the cluster" >&2; exit 1; }
HELLO="$(bed_mpi_hello mpicc)" || exit 1
LATE=$((WORKERS - 1)) # this pod is Running early but its sshd only starts late
cat <<EOF
    Each pod is a network namespace on bridge $BED_BRIDGE ($(bed_cidr)) with its own hostname;
    workers run a real sshd. The launcher pod sees the service-account token at
    /var/run/secrets/kubernetes.io/serviceaccount and talks to the fake API server over TLS.
    Nothing is routed outside that subnet; all of it is removed at the end.
EOF
for ((i = 0; i < WORKERS; i++)); do bed_worker_phase "w-$i" Pending || exit 1; done

TRACE="$BED_DIR/trace.jsonl"
OUT="$BED_DIR/mpirun.out"
HOSTS="$(bed_workers_list)"
say "mpirun starts now, while every worker pod is still Pending:"
echo "    mpirun -np $NP -H $HOSTS --mca plm_rsh_agent 'k8s-agent --trace trace.jsonl' mpi_hello"
T0_MS=$(($(date +%s%N) / 1000000))
bed_exec_launcher mpirun --allow-run-as-root --oversubscribe -np "$NP" -H "$HOSTS" \
  --mca plm_rsh_agent "$AGENT --trace $TRACE" "$HELLO" >"$OUT" 2>&1 </dev/null &
MPI_PID=$!

# 4. Pods become ready one after another; the last one is Running early but SSH-ready late.
at() {
  local left=$((T0_MS + $1 - $(date +%s%N) / 1000000))
  ((left > 0)) && sleep "$(printf '%d.%03d' $((left / 1000)) $((left % 1000)))"
  return 0
}
at 300
bed_worker_phase "w-$LATE" Running && event "pod w-$LATE: Running at $(bed_worker_ip "w-$LATE") (container started, sshd not yet accepting)"
for ((i = 0; i < WORKERS - 1; i++)); do
  at $((500 + i * 500))
  bed_sshd_start "w-$i" && bed_worker_phase "w-$i" Running && event "pod w-$i: Running at $(bed_worker_ip "w-$i"), sshd up"
done
at $((500 + WORKERS * 500))
bed_sshd_start "w-$LATE" && event "pod w-$LATE: sshd finally accepting connections"

deadline=$((SECONDS + 60))
while kill -0 "$MPI_PID" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
kill -0 "$MPI_PID" 2>/dev/null && { kill -TERM "$MPI_PID"; echo "demo: mpirun did not finish in 60 s" >&2; }
wait "$MPI_PID"
RC=$?
event "mpirun exited with status $RC"

say "mpirun's output (each rank prints its pod's hostname; an MPI_Allreduce checks the sum):"
{ grep '^mpi_hello ' "$OUT" | sort -t= -k2,2n; grep -v '^mpi_hello ' "$OUT" || true; } | sed 's/^/    /'
# The report reads the trace; keep it, the chart and the Chrome trace after the bed is gone.
REPORT_DIR="$BUILD/demo-report"
mkdir -p "$REPORT_DIR" && cp "$TRACE" "$REPORT_DIR/trace.jsonl"
say "where the start-up time went: k8s-agent --report $REPORT_DIR/trace.jsonl"
"$AGENT" -q --report --svg "$REPORT_DIR/launch.svg" --chrome "$REPORT_DIR/launch.trace.json" \
  "$REPORT_DIR/trace.jsonl" 2>&1 | sed 's/^/    /'
cat <<EOF
    Gantt chart (open in a browser):                     $REPORT_DIR/launch.svg
    Chrome trace (ui.perfetto.dev or chrome://tracing):  $REPORT_DIR/launch.trace.json
    Pod times come from the pod's own timestamps (whole seconds); SSH times from the agent's clock.
EOF
say "tearing the simulated cluster down"
bed_down || true  # Best effort: leftovers are reported by bed_down itself.
if ((RC == 0)); then
  say "done: $NP ranks ran on $WORKERS pods that were not ready when mpirun started"
else
  say "mpirun failed (status $RC)"
fi
exit "$RC"
