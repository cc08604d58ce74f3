#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Where one launch's CPU goes: k8s-agent `w-0 true` on a ready pod of the network-namespace bed, run under
# callgrind (instructions, repeatable under load), split into phases by bench/lib/cpu_phases.py; beside it
# the total of ssh with the same key exchange (curve25519-sha256) and with its default, in the same run; and
# the agent again with --lookup-cache, answered from the pod list an earlier agent shared (as all but the
# first of the agents mpirun starts together are).
#
# usage: sudo bench/cpu_breakdown.sh [--agent PATH] [--runs N] [--out FILE]
#   --agent PATH  the k8s-agent binary (default: build/launcher/k8s-agent, built with the default preset)
#   --runs N      callgrind runs of each client (default 3; the table gives min-max)
#   --out FILE    the Markdown report (default bench/results/cpu_breakdown.md)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AGENT="$REPO/build/launcher/k8s-agent" RUNS=3 OUT="$REPO/bench/results/cpu_breakdown.md"
while (($#)); do
  case "$1" in
  --agent) AGENT="$2" && shift 2 ;;
  --runs) RUNS="$2" && shift 2 ;;
  --out) OUT="$2" && shift 2 ;;
  -h | --help) sed -n '6,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' && exit 0 ;;
  *) echo "cpu_breakdown.sh: unknown argument $1 (see --help)" >&2 && exit 2 ;;
  esac
done
[[ $EUID -eq 0 ]] || { echo "cpu_breakdown.sh: needs root (network namespaces)" >&2 && exit 2; }
command -v valgrind >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q valgrind >/dev/null
# shellcheck source=bench/lib/own_bed.sh
. "$REPO/bench/lib/own_bed.sh"
own_bed_up cpu_breakdown.sh 1
IP0="$(bed_worker_ip w-0)"
SSH=(ssh -F "$BED_DIR/ssh/ssh_config" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
  -o BatchMode=yes -o LogLevel=ERROR)

# One plain launch first: the outcome must be 0, and the profile then holds no first-use work.
bed_exec_launcher "$AGENT" w-0 true || { echo "cpu_breakdown.sh: k8s-agent w-0 true failed" >&2 && exit 1; }
cg() { # NAME CMD...: one callgrind run into $RAW/NAME.out; prints its total
  local name="$1"
  shift
  bed_exec_launcher valgrind --tool=callgrind --callgrind-out-file="$RAW/$name.out" "$@" 2>"$RAW/$name.log" ||
    { echo "cpu_breakdown.sh: $name failed, see:" >&2 && cat "$RAW/$name.log" >&2 && exit 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$RAW/$name.log"
}
# The shared list lands in the bed launcher's home (gone with the bed); 60s: every profiled run below is
# answered from the one list the first shared launch makes.
SHARED=("$AGENT" --lookup-cache 60s)
bed_exec_launcher "${SHARED[@]}" w-0 true || { echo "cpu_breakdown.sh: the shared launch failed" >&2 && exit 1; }
agent_outs=() shared_outs=() ssh_same=() ssh_default=()
for ((i = 0; i < RUNS; i++)); do
  cg "agent$i" "$AGENT" w-0 true >/dev/null
  agent_outs+=("$RAW/agent$i.out")
  cg "shared$i" "${SHARED[@]}" w-0 true >/dev/null
  shared_outs+=("$RAW/shared$i.out")
  ssh_same+=("$(cg "ssh$i" "${SSH[@]}" -o KexAlgorithms=curve25519-sha256 "$IP0" true)")
  ssh_default+=("$(cg "sshd$i" "${SSH[@]}" "$IP0" true)")
done
# Instructions to time on this machine: task-clock of plain (unprofiled) runs.
ms="$(bed_exec_launcher perf stat -x, -r 10 -e task-clock "$AGENT" w-0 true 2>&1 >/dev/null |
  awk -F, '/task-clock/{printf "%.2f", $1}')" || ms=""
shared_ms="$(bed_exec_launcher perf stat -x, -r 10 -e task-clock "${SHARED[@]}" w-0 true 2>&1 >/dev/null |
  awk -F, '/task-clock/{printf "%.2f", $1}')" || shared_ms=""

min() { printf '%s\n' "$@" | sort -n | head -1; }
total() { for f in "$@"; do sed -n 's/^\(summary\|totals\): //p' "$f" | head -1; done | sort -n | head -1; }
agent_total="$(total "${agent_outs[@]}")" shared_total="$(total "${shared_outs[@]}")"
{
  echo "# One launch's CPU, by phase"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$REPO" rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg)," \
    "$(nproc) cores; \`bench/cpu_breakdown.sh --runs $RUNS\`: \`k8s-agent w-0 true\` on a ready pod of the bed," \
    "under callgrind (instructions of the agent process, user space only)."
  echo
  python3 "$REPO/bench/lib/cpu_phases.py" "${agent_outs[@]}"
  echo
  s="$(min "${ssh_same[@]}")" d="$(min "${ssh_default[@]}")"
  echo "| client, same run | instructions (M) | agent / it |"
  echo "|---|---:|---:|"
  awk -v a="$agent_total" -v s="$s" -v d="$d" -v c="$shared_total" 'BEGIN {
    printf "| k8s-agent | %.2f | |\n", a / 1e6
    printf "| ssh -o KexAlgorithms=curve25519-sha256 | %.2f | %.2fx |\n", s / 1e6, a / s
    printf "| ssh, default key exchange | %.2f | %.2fx |\n", d / 1e6, a / d
    printf "| k8s-agent --lookup-cache, answered from the shared list | %.2f | %.2fx of ssh (same kex) |\n", c / 1e6, c / s }'
  echo
  echo "With \`--lookup-cache\`, answered from the pod list another agent shared:"
  echo
  python3 "$REPO/bench/lib/cpu_phases.py" "${shared_outs[@]}"
  if [[ -n "$ms" ]]; then
    echo
    echo "Unprofiled, the same launch: $ms ms task-clock (perf stat, mean of 10; user + sys);" \
      "with \`--lookup-cache\` answered from the shared list: ${shared_ms:-?} ms."
  fi
} >"$OUT"
cat "$OUT"
