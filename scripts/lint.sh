#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Style gates: clang-format (no diff) and clang-tidy (.clang-tidy, all
# checks are errors) over the C++ sources. Needs a configured build dir for
# compile_commands.json (default: build/, from `cmake --preset default`).
#   ./scripts/lint.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mapfile -t sources < <(git ls-files '*.cc' '*.h')
clang-format --dry-run --Werror "${sources[@]}"
mapfile -t units < <(git ls-files 'plugin/*.cc' 'launcher/*.cc' 'images/*.cc' 'tests/*.cc')
# GCC-only warning flags in the compile database are not errors for clang.
clang-tidy -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option \
  "${units[@]}"
echo "lint: clean"
