#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Times k8s-agent --report on synthetic traces of N hosts (default 1,000, tree spawn: 1 launcher trace and
# one trace per first-level worker), text plus SVG plus Chrome JSON, and writes bench/results/report.md.
#
# usage: bench/report_bench.sh [--agent PATH] [--hosts N] [--runs R] [--out DIR]
# Needs no root and no network. Target: under 1 s for 1,000 hosts.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$BENCH_DIR/.." && pwd)"
AGENT="$REPO/build/launcher/k8s-agent"
HOSTS=1000
RUNS=7
OUT="$BENCH_DIR/results"
while [[ $# -gt 0 ]]; do
  case "$1" in
  --agent) AGENT="$2"; shift 2 ;;
  --hosts) HOSTS="$2"; shift 2 ;;
  --runs) RUNS="$2"; shift 2 ;;
  --out) OUT="$2"; shift 2 ;;
  *) sed -n '3,7p' "$0" >&2; exit 2 ;;
  esac
done
[[ -x "$AGENT" ]] || { echo "report_bench: no k8s-agent at $AGENT (build it, or --agent PATH)" >&2; exit 1; }
T=$(mktemp -d /tmp/k8s-agent-report-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
mapfile -t FILES < <(python3 "$BENCH_DIR/lib/synth_trace.py" --hosts "$HOSTS" --failed 3 --out "$T/traces")
lines=$(cat "${FILES[@]}" | wc -l)
bytes=$(cat "${FILES[@]}" | wc -c)
# Wall time and CPU time (user + sys) per run: on a loaded machine the wall time mostly measures the queue.
TIMEFORMAT='%R %U %S'
: > "$T/times"
for ((i = 0; i < RUNS; i++)); do
  { time "$AGENT" -q --report --svg "$T/l.svg" --chrome "$T/l.json" "${FILES[@]}" > "$T/report.txt"; } 2>> "$T/times"
done
sorted=$(awk '{printf "%d\n", $1 * 1000000}' "$T/times" | sort -n)
median=$(echo "$sorted" | sed -n "$(((RUNS + 1) / 2))p")
max=$(echo "$sorted" | tail -1)
min=$(echo "$sorted" | head -1)
cpu_median=$(awk '{printf "%d\n", ($2 + $3) * 1000}' "$T/times" | sort -n | sed -n "$(((RUNS + 1) / 2))p")
mkdir -p "$OUT"
{
  echo "# k8s-agent --report on $HOSTS synthetic hosts"
  echo
  echo "$(date -u +%Y-%m-%d) on $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "Input: ${#FILES[@]} trace files, $lines lines, $bytes bytes (bench/lib/synth_trace.py, tree spawn)."
  echo "Command: \`k8s-agent -q --report --svg l.svg --chrome l.json TRACE...\` (text on stdout), $RUNS runs."
  echo
  echo "| wall min | wall median | wall max | CPU (user+sys) median | target |"
  echo "|---|---|---|---|---|"
  printf '| %d ms | %d ms | %d ms | %d ms | < 1000 ms wall (%s) |\n' $((min / 1000)) $((median / 1000)) \
    $((max / 1000)) "$cpu_median" "$([[ $median -lt 1000000 ]] && echo met || echo missed)"
  echo
  echo "SVG: $(wc -c < "$T/l.svg") bytes, $(grep -c 'text-anchor="end"' "$T/l.svg") rows; Chrome JSON: $(wc -c < "$T/l.json") bytes."
} > "$OUT/report.md"
cat "$OUT/report.md"
