#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Style gates, cheapest first: clang-format (no diff), shellcheck -x over
# every tracked *.sh (.shellcheckrc; a finding is an error, shellcheck is
# required), the file-size gate (no production source over 600 lines) and
# clang-tidy (.clang-tidy, all checks are errors, function size included)
# over the C++ sources. Needs a configured build dir for
# compile_commands.json (default: build/, from `cmake --preset default`).
# clang-tidy runs one process per file, as many at once as there are cores
# (K8S_LINT_JOBS to change it): one process over every file takes far longer
# on a small machine. Fails if any file fails.
#   ./scripts/lint.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "lint: no $build/compile_commands.json (run cmake --preset default)" >&2
  exit 1
fi
mapfile -t sources < <(git ls-files '*.cc' '*.h')
clang-format --dry-run --Werror "${sources[@]}"
if ! command -v shellcheck >/dev/null; then
  echo "lint: shellcheck not installed (run scripts/deps.sh as root)" >&2
  exit 1
fi
# From the repository root: the '# shellcheck source=' paths are relative to
# it or to their script (.shellcheckrc).
git ls-files -z '*.sh' | xargs -0 shellcheck -x
# A production file past 600 lines holds more than one thing: split it
# (tests are not counted).
max_lines=600
oversized=0
while IFS= read -r -d '' file; do
  lines=$(wc -l <"$file")
  if [ "$lines" -gt "$max_lines" ]; then
    echo "lint: $file has $lines lines (limit $max_lines): split it" >&2
    oversized=1
  fi
done < <(git ls-files -z 'plugin/*.cc' 'plugin/*.h' 'launcher/*.cc' \
           'launcher/*.h' 'images/*.cc')
[ "$oversized" = 0 ] || exit 1
jobs=${K8S_LINT_JOBS:-$(nproc)}
# GCC-only warning flags in the compile database are not errors for clang.
# xargs exits non-zero (123) when any clang-tidy run fails.
git ls-files -z 'plugin/*.cc' 'launcher/*.cc' 'images/*.cc' 'tests/*.cc' |
  xargs -0 -n 1 -P "$jobs" clang-tidy -p "$build" --quiet \
    --extra-arg=-Wno-unknown-warning-option
echo "lint: clean"
