#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A pod restart runs the delivery init container again over the kept
# emptyDir. With an emptyDir sized for one copy (sizeLimit, or a small
# medium: Memory), the second run must not need room for a second copy of
# what is already there and identical; a file that differs is still
# replaced. The directory is a 256 KiB tmpfs in a user and mount namespace
# of this test's own (no root needed, nothing mounted outside).
# Usage: redelivery_test.sh K8S_AGENT_DELIVER
set -euo pipefail

deliver="$1"
testlib="$(cd "$(dirname "$0")/../lib" && pwd)/testlib.sh"
# shellcheck source=tests/lib/testlib.sh
source "$testlib"
if ! unshare --user --map-root-user --mount true 2>/dev/null; then
  skip "no unprivileged user and mount namespace here (unshare -rm)"
fi

tmp="$(mktemp -d /tmp/k8s-deliver-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
# The delivery image's layout: the copier with its payload beside it (no
# sshd side, as in the arm64 image). k8s-agent is 160 KiB of noise: the
# tmpfs holds it once, not twice.
mkdir "$tmp/image" "$tmp/dir"
cp "$deliver" "$tmp/image/k8s-agent-deliver"
head -c 163840 /dev/urandom >"$tmp/image/k8s-agent"
for f in openmpi-mca-params.conf prte-mca-params.conf ompi-env.sh; do
  echo "# $f" >"$tmp/image/$f"
done

# shellcheck disable=SC2016 # expanded by the inner shell
unshare --user --map-root-user --mount bash -euo pipefail -c '
  tmp="$1"
  source "$2"
  TEST_KEEP_GOING=1
  mount -t tmpfs -o size=256k,mode=0777 k8s-deliver-test "$tmp/dir"
  run() { "$tmp/image/k8s-agent-deliver" "$tmp/dir" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; return 1; }; }
  run || fail "first delivery"
  cmp -s "$tmp/image/k8s-agent" "$tmp/dir/k8s-agent" || fail "first delivery: k8s-agent differs"
  # Room left for the small files, not for a second k8s-agent.
  if head -c 163840 /dev/zero >"$tmp/dir/probe" 2>/dev/null; then
    fail "the tmpfs holds k8s-agent twice: the test proves nothing"
  fi
  rm -f "$tmp/dir/probe"
  inode="$(stat -c %i "$tmp/dir/k8s-agent")"
  if run; then
    ok "second delivery into a directory that only held the first: $(cat "$tmp/out")"
  else
    fail "second delivery (every file already there and identical)"
  fi
  [[ "$(stat -c %i "$tmp/dir/k8s-agent")" == "$inode" ]] || fail "k8s-agent was written again"
  grep -q "4 already in place and identical" "$tmp/out" || fail "not said: $(cat "$tmp/out")"
  # A mode that differs is set in place (no room needed); a file whose text
  # differs is replaced.
  chmod 0700 "$tmp/dir/k8s-agent"
  echo changed >"$tmp/dir/ompi-env.sh"
  run || fail "delivery over a changed mode and text"
  [[ "$(stat -c %a "$tmp/dir/k8s-agent")" == 755 ]] || fail "k8s-agent mode not restored"
  cmp -s "$tmp/image/ompi-env.sh" "$tmp/dir/ompi-env.sh" || fail "ompi-env.sh not replaced"
  [[ "$(stat -c %i "$tmp/dir/k8s-agent")" == "$inode" ]] || fail "k8s-agent copied for its mode"
  grep -q "3 already in place" "$tmp/out" || fail "not said: $(cat "$tmp/out")"
  left="$(find "$tmp/dir" -name ".*.tmp.*")"
  [[ -z "$left" ]] || fail "a temporary was left: $left"
  testlib_exit PASS
' bash "$tmp" "$testlib"
