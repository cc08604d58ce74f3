#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# scripts/release.sh answers --help (and -h) with its usage on stdout and exit 0, before it builds or
# checks anything; a bad option (or one missing its value) gets its name, the usage on stderr and exit 2;
# an unreadable --sign-key is refused (exit 1) before anything is built.
# Usage: release_usage_test.sh [REPO_DIR]
set -uo pipefail

repo="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
# shellcheck source=tests/lib/testlib.sh
source "$repo/tests/lib/testlib.sh"
TEST_KEEP_GOING=1
tmp="$(mktemp -d /tmp/k8s-release-usage.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

for flag in --help -h; do
  "$repo/scripts/release.sh" "$flag" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if ((rc != 0)); then
    fail "release.sh $flag: exit $rc, want 0: $(cat "$tmp/err")"
  elif ! grep -q '^usage: scripts/release.sh .*--allow-dirty' "$tmp/out" || ! grep -q -- '--sign-key KEY' "$tmp/out"; then
    fail "release.sh $flag: no usage line on stdout: $(cat "$tmp/out")"
  elif ! grep -q "^never pairs one commit's README" "$tmp/out"; then
    fail "release.sh $flag: the usage is cut short: $(tail -n 2 "$tmp/out")"
  elif [[ -s "$tmp/err" ]]; then
    fail "release.sh $flag: wrote to stderr: $(cat "$tmp/err")"
  else
    ok "release.sh $flag: usage on stdout, exit 0"
  fi
done

for args in "--bogus" "--out" "--sign-key"; do
  # shellcheck disable=SC2086  # One word or two, on purpose.
  "$repo/scripts/release.sh" $args >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if ((rc != 2)); then
    fail "release.sh $args: exit $rc, want 2"
  elif ! head -n 1 "$tmp/err" | grep -q -- "^release: .*$args" || ! grep -q "^usage: " "$tmp/err"; then
    fail "release.sh $args: want the option named and the usage on stderr: $(cat "$tmp/err")"
  elif [[ -s "$tmp/out" ]]; then
    fail "release.sh $args: wrote to stdout"
  else
    ok "release.sh $args: named, usage on stderr, exit 2"
  fi
done
"$repo/scripts/release.sh" --sign-key "$tmp/no-such-key" >"$tmp/out" 2>"$tmp/err"
rc=$?
if ((rc != 1)) || ! grep -q -- "--sign-key $tmp/no-such-key: no such readable file" "$tmp/err"; then
  fail "release.sh --sign-key MISSING: exit $rc: $(cat "$tmp/err")"
else
  ok "release.sh --sign-key MISSING: refused before building"
fi
testlib_exit PASS
