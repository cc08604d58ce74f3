#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The launch model behind the projection to 1,000 and 4,000 real nodes, with its parameters measured on
# the bed, checked against the bed's own launch times, then projected (bench/lib/tree_model.py).
#
# usage: sudo bench/tree_model.sh [--agent PATH] [--workers N] [--runs R] [--out FILE]
#   --agent PATH   the k8s-agent binary (default: build/launcher/k8s-agent, built with the default preset)
#   --workers N    worker pods, the largest N measured (default 256; the other point is N/4)
#   --runs R       runs of each measurement (default 3; medians)
#   --out FILE     the Markdown report (default bench/results/tree_model.md)
#
# Open MPI 4 (`mpirun ... true`, one rank per pod); k8s-agent, k8s-agent --lookup-cache 5s and ssh with the
# agent's key exchange:
#   one    `mpirun -H w-0 -np 1 true`: one launch, one daemon's start and report, one rank
#   chain  `mpirun -H w-0,w-1 -np 2 --mca routed_radix 1 true`: a tree of depth 2 (w-0 starts w-1), on an
#          otherwise idle machine; minus `one`, the latency L of one more level
#   N      `mpirun -np N true` with and without tree spawn: wall; CPU of the launcher pod's processes
#          (mpirun and the clients it reaped, from `times`); CPU of the whole machine (/proc/stat)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AGENT="$REPO/build/launcher/k8s-agent" WORKERS=256 RUNS=3 OUT="$REPO/bench/results/tree_model.md"
while (($#)); do
  case "$1" in
  --agent) AGENT="$2" && shift 2 ;;
  --workers) WORKERS="$2" && shift 2 ;;
  --runs) RUNS="$2" && shift 2 ;;
  --out) OUT="$2" && shift 2 ;;
  -h | --help) sed -n '6,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' && exit 0 ;;
  *) echo "tree_model.sh: unknown argument $1 (see --help)" >&2 && exit 2 ;;
  esac
done
[[ $EUID -eq 0 ]] || { echo "tree_model.sh: needs root (network namespaces)" >&2 && exit 2; }
if ! [[ "$WORKERS" =~ ^[0-9]+$ ]] || ((WORKERS < 8)); then
  echo "tree_model.sh: --workers needs a number, 8 or more" >&2 && exit 2
fi
command -v mpirun >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev >/dev/null
# shellcheck source=bench/lib/own_bed.sh
. "$REPO/bench/lib/own_bed.sh"
own_bed_up tree_model.sh "$WORKERS"
SSH="ssh -F $BED_DIR/ssh/ssh_config -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes"
SSH+=" -o LogLevel=ERROR -o KexAlgorithms=curve25519-sha256"
hosts() { # N: w-0,...,w-(N-1)
  local i out=''
  for ((i = 0; i < $1; i++)); do out+="w-$i,"; done
  printf '%s' "${out%,}"
}
busy_ticks() { # all CPUs' non-idle clock ticks since boot
  awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat
}

# One run: "name client n mode wall_ms machine_cpu_ms children_user children_sys" on $RAW/runs.txt.
one() {
  local name="$1" client="$2" n="$3" mode="$4" agent extra=() t0 b0 out
  case "$client" in
  agent) agent="$AGENT" ;;
  shared) agent="$AGENT --lookup-cache 5s" ;;
  ssh) agent="$SSH" ;;
  esac
  [[ "$mode" == notree ]] && extra=(--mca plm_rsh_no_tree_spawn 1)
  [[ "$name" == chain ]] && extra=(--mca routed_radix 1)
  local mpi=(mpirun --allow-run-as-root -np "$n" -H "$(hosts "$n")" "${extra[@]}" --mca plm_rsh_agent "$agent")
  b0="$(busy_ticks)"
  t0="$(date +%s%N)"
  # `times` in this shell, not a subshell: its second line is the reaped children's CPU (mpirun and the
  # clients it started, which it reaped).
  # The shared pod list is removed first: every run of `shared` pays for one list.
  # shellcheck disable=SC2016 # expanded by the pod's bash
  out="$(bed_exec_launcher bash -c 'rm -rf "$HOME/.kube/cache/k8s-agent/pods"
    "$@" >"$0" 2>&1 || echo FAILED; times' "$RAW/last_mpirun.log" "${mpi[@]}" true)"
  local wall=$((($(date +%s%N) - t0) / 1000000)) busy=$(($(busy_ticks) - b0))
  if [[ "$out" == *FAILED* ]]; then
    echo "tree_model.sh: $name run, $client, N=$n, $mode: mpirun failed; its last lines:" >&2
    tail -5 "$RAW/last_mpirun.log" >&2
    echo "(the bed is torn down on exit; rerun with --workers and --runs small to reproduce)" >&2
    return 1
  fi
  # The last two fields are `times`' user and system time of the children, e.g. "0m1.234s 0m0.567s".
  printf '%s %s %d %s %d %d %s\n' "$name" "$client" "$n" "$mode" "$wall" \
    $((busy * 1000 / $(getconf CLK_TCK))) "$(sed -n 2p <<<"$out")" >>"$RAW/runs.txt"
}

: >"$RAW/runs.txt"
bed_exec_launcher "$AGENT" w-0 true || { echo "tree_model.sh: k8s-agent w-0 true failed" >&2 && exit 1; }
small=$((WORKERS / 4))
# Each measurement starts on a settled bed: the daemons of the run before have exited.
settle() {
  local i
  for ((i = 0; i < 600; i++)); do
    pgrep -x orted >/dev/null || return 0
    sleep 0.1
  done
  echo "tree_model.sh: orted processes still running after 60 s" >&2 && return 1
}
# The small runs first and more often: they are short, and L is a difference of two of them.
for ((r = 0; r < RUNS + 2; r++)); do
  for client in agent shared ssh; do
    settle
    one one "$client" 1 tree
    settle
    one chain "$client" 2 tree
  done
done
for ((r = 0; r < RUNS; r++)); do
  for client in agent shared ssh; do
    for n in "$small" "$WORKERS"; do
      for mode in tree notree; do
        settle
        one curve "$client" "$n" "$mode"
      done
    done
  done
done
python3 "$REPO/bench/lib/tree_model.py" "$RAW/runs.txt" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)" >"$OUT"
# The raw runs, for a reader who wants another model.
{
  printf '\n## Raw runs\n\nname client N spawn wall_ms machine_cpu_ms children_user children_sys:\n\n```\n'
  cat "$RAW/runs.txt"
  printf '```\n'
} >>"$OUT"
cat "$OUT"
