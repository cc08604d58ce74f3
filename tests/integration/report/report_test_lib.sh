# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# What the --report CLI tests share. Sourced with the test's arguments:
#   source report_test_lib.sh AGENT_BINARY SCENARIO
# Sets AGENT, SCENARIO, HERE (this folder), REPO, a temporary dir T removed on exit, and TAG (the
# scenario, as the lines say it; a test may change it). fail MESSAGE prints the message, then
# what the test's own on_fail function shows (when it has one), and exits 1; ok MESSAGE says it
# passed; synth ARGS... writes synthetic traces (bench/lib/synth_trace.py ARGS) and lists them in FILES.
# shellcheck disable=SC2034 # AGENT and FILES are for the tests that source this
AGENT=$1
SCENARIO=$2
TAG=$SCENARIO
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
T=$(mktemp -d /tmp/k8s-agent-report.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
  echo "FAIL [$TAG]: $*" >&2
  if declare -F on_fail >/dev/null; then on_fail >&2; fi
  exit 1
}
ok() { echo "ok [$TAG]: $*"; }
synth() {
  python3 "$REPO/bench/lib/synth_trace.py" --out "$T/traces" "$@" >"$T/files" || fail "synth_trace.py failed"
  # shellcheck disable=SC2034
  mapfile -t FILES <"$T/files"
}
