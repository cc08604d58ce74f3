# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# What the --report CLI tests share. Sourced with the test's arguments:
#   source report_test_lib.sh AGENT_BINARY SCENARIO
# Sets AGENT, SCENARIO, HERE (this folder), REPO, a temporary dir T removed on exit, and TEST_TAG
# (the scenario, as the lines say it; a test may change it). fail, ok and skip are
# tests/lib/testlib.sh's (fail shows what the test's own on_fail function prints);
# synth ARGS... writes synthetic traces (bench/lib/synth_trace.py ARGS) and lists them in FILES.
# shellcheck disable=SC2034 # AGENT and FILES are for the tests that source this
AGENT=$1
SCENARIO=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
source "$REPO/tests/lib/testlib.sh"
TEST_TAG=$SCENARIO
T=$(mktemp -d /tmp/k8s-agent-report.XXXXXX)
trap 'rm -rf "$T"' EXIT
synth() {
  python3 "$REPO/bench/lib/synth_trace.py" --out "$T/traces" "$@" >"$T/files" || fail "synth_trace.py failed"
  # shellcheck disable=SC2034
  mapfile -t FILES <"$T/files"
}
