#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cmake/build_info.cmake's version, from the git tag, in a temporary repository: no tag yet
# (BASE_VERSION-dev.N+gSHORT, N the commits), at a tag vX.Y.Z (X.Y.Z), commits after it
# (X.Y.(Z+1)-dev.N+gSHORT), after a pre-release tag (X.Y.Z-PRE.dev.N+gSHORT), uncommitted changes
# (+dirty / .dirty), a tag that is not semver (ignored), and no git checkout at all (BASE_VERSION).
# usage: version_test.sh SOURCE_DIR
set -uo pipefail
src="$1"
# shellcheck source=tests/lib/testlib.sh
source "$src/tests/lib/testlib.sh"
TEST_KEEP_GOING=1
tmp="$(mktemp -d /tmp/k8s-agent-version-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
repo="$tmp/repo"
mkdir -p "$repo"
g() { git -C "$repo" -c user.name=test -c user.email=test@example.invalid -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
commit() { # message: one commit that changes file
  echo "$1" >>"$repo/file" && g add file && g commit -q -m "$1"
}
# check WHAT WANT DIR: the header's K8S_AGENT_VERSION for DIR is WANT; each one is kept in $versions.
versions=()
check() {
  cmake -DSRC="$3" -DOUT="$tmp/build_info.h" -DBASE_VERSION=0.1.0 -P "$src/cmake/build_info.cmake" \
    2>"$tmp/cmake.err" || { fail "$1: build_info.cmake: $(cat "$tmp/cmake.err")"; return; }
  local v
  v="$(sed -n 's/^#define K8S_AGENT_VERSION "\(.*\)"$/\1/p' "$tmp/build_info.h")"
  versions+=("$v")
  expect_eq "$1" "$2" "$v"
}
short() { g rev-parse HEAD | cut -c1-12; }

g init -q
commit one
commit two
commit three
check "no tag: BASE_VERSION-dev.N+gSHORT" "0.1.0-dev.3+g$(short)" "$repo"
echo change >>"$repo/file"
check "no tag, uncommitted changes" "0.1.0-dev.3+g$(short).dirty" "$repo"
g checkout -q -- file

g tag v1.2.3
check "at the tag" "1.2.3" "$repo"
echo change >>"$repo/file"
check "at the tag, uncommitted changes" "1.2.3+dirty" "$repo"
g checkout -q -- file
# An untracked file is not a change to the commit's sources.
touch "$repo/untracked"
check "at the tag, an untracked file" "1.2.3" "$repo"
rm "$repo/untracked"

commit four
commit five
check "two commits after v1.2.3" "1.2.4-dev.2+g$(short)" "$repo"
# An annotated tag counts as a lightweight one; the newest tag wins.
g tag -a -m "release 1.3.0" v1.3.0
check "at an annotated tag" "1.3.0" "$repo"
commit six
check "one commit after v1.3.0" "1.3.1-dev.1+g$(short)" "$repo"

g tag v2.0.0-rc.1
commit seven
check "after a pre-release tag" "2.0.0-rc.1.dev.1+g$(short)" "$repo"
# Tags not shaped vX.Y.Z are passed over for the newest that is.
g tag latest
g tag v2
check "tags latest and v2 passed over" "2.0.0-rc.1.dev.1+g$(short)" "$repo"
# One shaped so but not semver is ignored, with a warning.
g tag v2.0.0x
check "a tag that is not semver" "0.1.0-dev.7+g$(short)" "$repo"
grep -q "tag v2.0.0x is not vX.Y.Z" "$tmp/cmake.err" || fail "no warning for the tag v2.0.0x: $(cat "$tmp/cmake.err")"
g tag -d v2.0.0x >/dev/null

# A source archive: no git checkout.
mkdir "$tmp/archive"
check "no git checkout" "0.1.0" "$tmp/archive"
grep -q '^#define K8S_AGENT_COMMIT "unknown"$' "$tmp/build_info.h" || fail "commit outside git: $(cat "$tmp/build_info.h")"

# Every version above is semver 2.0 (release.sh names the archive after it).
((${#versions[@]} == 12)) || fail "${#versions[@]} versions, want 12"
for v in "${versions[@]}"; do
  [[ "$v" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$ ]] ||
    fail "$v is not semver"
done
testlib_exit "PASS: build_info.cmake's version from the git tag"
