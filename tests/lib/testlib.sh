# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The shell tests' shared helpers. A test sources it after its own `set`:
#   source "$REPO/tests/lib/testlib.sh"
# Exit codes, as ctest reads them (SKIP_RETURN_CODE 77): 0 pass, 1 fail,
# 77 skip.
#
#   fail MESSAGE    "FAIL: MESSAGE" on stderr, then the test's on_fail
#                   function's output (its evidence, when it defines one),
#                   then exit 1. With TEST_KEEP_GOING=1 it counts the
#                   failure in $failures and returns instead: the test runs
#                   its other checks and ends with testlib_exit.
#   ok MESSAGE      "ok: MESSAGE" on stdout.
#   skip MESSAGE    "SKIP: MESSAGE" on stdout, exit 77.
#   log MESSAGE     "[TAG HH:MM:SS] MESSAGE" on stderr (progress).
#   expect_eq WHAT EXPECTED ACTUAL
#                   ok WHAT when they are equal, else fail naming both.
#   testlib_exit PASS_LINE
#                   exit 1 after "N check(s) failed" when a fail was
#                   counted, else print PASS_LINE and exit 0.
#   kill_pids PID...
#                   TERM, up to 2 s for them to go, KILL, and reap them.
#   kill_on_exit PID...
#                   kill_pids them when the test exits: sets the EXIT trap,
#                   which runs the test's on_exit function (its other
#                   cleanup) first.
#   json_get FILE PATH
#                   prints the JSON value at PATH (dot-separated keys and
#                   list indices: items.0.metadata.name) in FILE (- for
#                   stdin): strings raw, anything else as JSON; fails (status
#                   1, the reason on stderr) when PATH is not there.
#
# TEST_TAG, when set, names the test in every line: "FAIL [TAG]: ...".
# Every setting is read at each call, so a test may set or change it after
# sourcing.

failures=0
TESTLIB_EXIT_PIDS=()

testlib_tag() { if [ -n "${TEST_TAG:-}" ]; then printf ' [%s]' "$TEST_TAG"; fi; }

fail() {
  echo "FAIL$(testlib_tag): $*" >&2
  if [ "${TEST_KEEP_GOING:-0}" = 1 ]; then
    failures=$((failures + 1))
    return 0
  fi
  if declare -F on_fail >/dev/null; then on_fail >&2; fi
  exit 1
}
ok() { echo "ok$(testlib_tag): $*"; }
skip() {
  echo "SKIP$(testlib_tag): $*"
  exit 77
}
log() { printf '[%s %s] %s\n' "${TEST_TAG:-test}" "$(date +%H:%M:%S)" "$*" >&2; }

expect_eq() { # what expected actual
  if [[ "$2" == "$3" ]]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}

testlib_exit() {
  if [ "$failures" -gt 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "$*"
  exit 0
}

# A zombie child still answers kill -0: a pid counts as gone once its state
# is Z, so the wait ends when it has exited, not when it was reaped.
kill_pids() {
  local pids=() p i alive
  for p in "$@"; do kill -0 "$p" 2>/dev/null && pids+=("$p"); done
  ((${#pids[@]})) || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    alive=0
    for p in "${pids[@]}"; do
      if kill -0 "$p" 2>/dev/null && [[ "$(awk '/^State:/{print $2}' "/proc/$p/status" 2>/dev/null)" != Z ]]; then
        alive=1
      fi
    done
    ((alive)) || break
    sleep 0.02
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  # Reap our own children so no zombie is left.
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  return 0
}

kill_on_exit() {
  TESTLIB_EXIT_PIDS+=("$@")
  trap testlib_on_exit EXIT
}

# shellcheck disable=SC2317 # run by the EXIT trap
testlib_on_exit() {
  if declare -F on_exit >/dev/null; then on_exit; fi
  kill_pids ${TESTLIB_EXIT_PIDS[@]+"${TESTLIB_EXIT_PIDS[@]}"}
}

json_get() { # FILE PATH
  python3 -c '
import json, sys
path, src = sys.argv[2], sys.argv[1]
v = json.load(sys.stdin if src == "-" else open(src))
for key in filter(None, path.split(".")):
    try:
        v = v[int(key)] if isinstance(v, list) else v[key]
    except (KeyError, IndexError, ValueError, TypeError):
        sys.exit(f"json_get: {src}: no {path} (at {key})")
print(v if isinstance(v, str) else json.dumps(v))
' "$1" "$2"
}
