#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The manifests and examples (images/k8s/) name a version of the project's images, never `:latest` (which
# moves under a running job and is always pulled): every k8s-agent, k8s-agent-worker and k8s-agent-launcher
# reference has the tag PROJECT_VERSION (CMakeLists.txt's project(), the release the examples go with).
# Usage: image_tags_test.sh [REPO_DIR]
set -uo pipefail
repo="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
# shellcheck source=tests/lib/testlib.sh
source "$repo/tests/lib/testlib.sh"
TEST_KEEP_GOING=1
version="$(sed -n 's/^project(k8s-agent VERSION \([0-9.]*\) .*/\1/p' "$repo/CMakeLists.txt")"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "no PROJECT_VERSION in CMakeLists.txt: '$version'"
mapfile -t files < <(find "$repo/images/k8s" -name '*.yaml' | sort)
((${#files[@]} > 10)) || fail "only ${#files[@]} manifests under $repo/images/k8s"
if grep -n ':latest\b' "${files[@]}"; then
  fail "a manifest names :latest (above)"
else
  ok "no :latest in ${#files[@]} manifests"
fi
# Each reference to the project's images (image: NAME:TAG, reference: NAME:TAG; comments too).
refs="$(grep -ohE '\b(k8s-agent|k8s-agent-worker|k8s-agent-launcher)(:[^ ,}"]+)?' "${files[@]}" |
  grep -E '^k8s-agent(-worker|-launcher)?:' | sort | uniq -c)"
[[ -n "$refs" ]] || fail "no image reference found"
while read -r count ref; do
  if [[ "${ref#*:}" == "$version" ]]; then
    ok "$count x $ref"
  else
    fail "$count x $ref: want the tag $version (PROJECT_VERSION)"
  fi
done <<<"$refs"
testlib_exit "PASS: images/k8s names k8s-agent $version's images"
