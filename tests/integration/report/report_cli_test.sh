#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# k8s-agent --report on synthetic traces (bench/lib/synth_trace.py):
#   report_cli_test.sh AGENT_BINARY SCENARIO
# Scenarios: tree (several files, text and json), bad-lines, no-records,
# outputs (--svg/--chrome written, said where), thousand (1,000 hosts
# complete; the timing claim is in bench/report_bench.sh, not here).
set -uo pipefail
# shellcheck source=tests/integration/report/report_test_lib.sh
source "$(dirname "$0")/report_test_lib.sh" "$@"
# shellcheck disable=SC2317 # called by fail()
on_fail() { for f in "$T"/out "$T"/err; do [ -f "$f" ] && { echo "--- $f"; head -40 "$f"; }; done; }

case "$SCENARIO" in
tree)
  synth --hosts 80 --fanout 16 --failed 2
  [ "${#FILES[@]}" -gt 2 ] || fail "expected several trace files, got ${#FILES[@]}"
  "$AGENT" --report "${FILES[@]}" > "$T/out" 2> "$T/err" || fail "text report failed"
  grep -q "80 host(s) from ${#FILES[@]} trace file(s)" "$T/out" || fail "summary line"
  grep -q '(78 reached, 2 failed)' "$T/out" || fail "reached/failed counts"
  [ "$(grep -c '^w-[0-9]* ' "$T/out")" = 80 ] || fail "expected 80 host rows"
  grep -q '^critical\|  critical    w-' "$T/out" || fail "no critical path"
  [ "$(grep -c '^failed: w-[0-9]* at +.*ErrImagePull' "$T/out")" = 2 ] || fail "failed hosts with their reason"
  grep -q '^slowest (started last): ' "$T/out" || fail "no slowest hosts"
  "$AGENT" --report --format json "${FILES[@]}" > "$T/json" 2> "$T/err" || fail "json report failed"
  python3 - "$T/json" <<'PY' || fail "json: $(head -c 600 "$T/json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"]["hosts"] == 80 and r["job"]["failed"] == 2, r["job"]
assert len(r["hosts"]) == 80 and len(r["failed"]) == 2
last = max((h for h in r["hosts"] if h["reached"]), key=lambda h: h["end_ms"])
assert r["critical"]["host"] == last["host"], (r["critical"], last["host"])
# Tree spawn: hosts from worker traces began after their parent started.
assert any(h["trace"].endswith("/w-0.jsonl") for h in r["hosts"])
for h in r["hosts"]:
    ends = [s["start_ms"] + s["duration_ms"] for s in h["spans"]]
    starts = [s["start_ms"] for s in h["spans"]]
    assert all(abs(a - b) < 0.01 for a, b in zip(ends, starts[1:])), h["host"]
PY
  ok "$(grep '  critical' "$T/out")"
  ;;
bad-lines)
  synth --hosts 3 --fanout 3 --failed 0
  f="${FILES[0]}"
  { echo 'INFO something else wrote here'; cat "$f"; printf '{"host":"w-9","event":"sta'; } > "$T/mixed.jsonl"
  "$AGENT" --report "$T/mixed.jsonl" > "$T/out" 2> "$T/err" || fail "a few bad lines must not fail the report"
  grep -q "k8s-agent: --report: $T/mixed.jsonl:1: skipped: not JSON" "$T/err" || fail "no warning naming file:1"
  n=$(($(wc -l < "$f") + 2))
  grep -q "$T/mixed.jsonl:$n: skipped: not JSON.*no newline" "$T/err" || fail "no warning naming the truncated line $n"
  grep -q '3 host(s)' "$T/out" || fail "hosts from the good lines"
  ok "$(wc -l < "$T/err") warnings, report made"
  ;;
no-records)
  printf 'hello\nworld\n' > "$T/foreign.log"
  "$AGENT" --report "$T/foreign.log" > "$T/out" 2> "$T/err"
  rc=$?
  [ $rc -eq 255 ] || fail "foreign file: rc $rc, want 255"
  grep -q "no k8s-agent trace record in 2 line(s)" "$T/err" || fail "message for a foreign file"
  [ -s "$T/out" ] && fail "stdout must be empty on error"
  : > "$T/empty.jsonl"
  "$AGENT" --report "$T/empty.jsonl" > "$T/out" 2> "$T/err"; rc=$?
  [ $rc -eq 255 ] || fail "empty file: rc $rc"
  "$AGENT" --report "$T/missing.jsonl" > "$T/out" 2> "$T/err"; rc=$?
  [ $rc -eq 255 ] || fail "missing file: rc $rc"
  grep -q "reading trace $T/missing.jsonl" "$T/err" || fail "message for a missing file"
  "$AGENT" --report > "$T/out" 2> "$T/err"; rc=$?
  [ $rc -eq 255 ] || fail "no file: rc $rc"
  grep -q "no trace file given" "$T/err" || fail "message without files"
  "$AGENT" --report --format horovod "$T/empty.jsonl" > "$T/out" 2> "$T/err"; rc=$?
  [ $rc -eq 255 ] || fail "--format horovod with --report: rc $rc"
  grep -q "not a report format" "$T/err" || fail "--format horovod with --report: message"
  ok "foreign, empty, missing and absent traces exit 255 with a message"
  ;;
outputs)
  synth --hosts 6 --fanout 6 --failed 1
  "$AGENT" --report --svg "$T/l.svg" --chrome "$T/l.json" "${FILES[@]}" > "$T/out" 2> "$T/err" || fail "rc"
  grep -q "wrote the SVG Gantt chart to $T/l.svg" "$T/err" || fail "did not say where the SVG went"
  grep -q "wrote the Chrome trace .* to $T/l.json" "$T/err" || fail "did not say where the Chrome trace went"
  head -c 5 "$T/l.svg" | grep -q '<svg ' || fail "SVG"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))["traceEvents"]' "$T/l.json" || fail "Chrome JSON"
  "$AGENT" --report --svg "$T/nodir/l.svg" "${FILES[@]}" > "$T/out" 2> "$T/err"; rc=$?
  [ $rc -eq 255 ] || fail "unwritable --svg: rc $rc"
  grep -q "writing the SVG Gantt chart" "$T/err" || fail "unwritable --svg: message"
  "$AGENT" --svg "$T/x.svg" w-0 true > "$T/out" 2> "$T/err"; rc=$?
  [ $rc -eq 255 ] || fail "--svg without --report: rc $rc"
  grep -q "given without --report" "$T/err" || fail "--svg without --report: message"
  ok "SVG and Chrome trace written, paths said"
  ;;
thousand)
  synth --hosts 1000 --failed 3
  "$AGENT" --report --format json --svg "$T/l.svg" --chrome "$T/l.json" "${FILES[@]}" > "$T/json" 2> "$T/err" ||
    fail "rc"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["job"]["hosts"]==1000, r["job"]' "$T/json" ||
    fail "1000 hosts"
  ok "1000 hosts in ${#FILES[@]} files"
  ;;
*)
  fail "unknown scenario"
  ;;
esac
