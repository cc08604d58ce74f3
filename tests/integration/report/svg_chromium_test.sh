#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Opens --report's SVG in Debian's headless Chromium and checks the screenshot shows the chart:
#   svg_chromium_test.sh AGENT_BINARY SCENARIO    (few: 8 hosts, a row each; thousand: 1,000 hosts, grouped)
# Exit 77 (skip) with the reason when chromium is not installed and cannot be.
set -uo pipefail
# shellcheck source=tests/integration/report/report_test_lib.sh
source "$(dirname "$0")/report_test_lib.sh" "$@"
TEST_TAG="svg $SCENARIO"
# shellcheck disable=SC2317 # called by fail()
on_fail() { if [ -f "$T/chromium.log" ]; then tail -20 "$T/chromium.log"; fi; }

if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    # shellcheck source=../../../scripts/deps.sh
    source "$REPO/scripts/deps.sh"
    k8s_agent_install_deps chromium >"$T/apt.log" 2>&1 || true
  fi
  command -v chromium >/dev/null || skip "chromium is not installed and could not be (apt-get install chromium)"
fi

case "$SCENARIO" in
few) hosts=8; fanout=8; size=1000,420 ;;
thousand) hosts=1000; fanout=64; size=1000,1000 ;;
*) fail "unknown scenario" ;;
esac
synth --hosts "$hosts" --fanout "$fanout" --failed 1
"$AGENT" -q --report --svg "$T/launch.svg" "${FILES[@]}" > "$T/report.txt" || fail "--report failed"
if [ "$SCENARIO" = thousand ]; then
  rows=$(grep -c 'text-anchor="end"' "$T/launch.svg")
  height=$(grep -o '^<svg [^>]*height="[0-9.]*"' "$T/launch.svg" | grep -o '[0-9.]*"$' | tr -d '"')
  [ "$rows" -le 50 ] || fail "$rows label rows for 1000 hosts: not legible"
  [ "${height%.*}" -le 1000 ] || fail "SVG is ${height} px high for 1000 hosts"
  grep -q '1000 hosts: groups of' "$T/launch.svg" || fail "no aggregation caption"
fi

# No network: in a fresh network namespace when we can make one (root), else the flags keep it quiet.
NS=()
[ "$(id -u)" = 0 ] && unshare --net true 2>/dev/null && NS=(unshare --net)
"${NS[@]}" timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --disable-extensions --user-data-dir="$T/profile" \
  --hide-scrollbars --window-size="$size" --screenshot="$T/shot.png" "file://$T/launch.svg" >"$T/chromium.log" 2>&1
[ -s "$T/shot.png" ] || fail "chromium wrote no screenshot (rc $?)"
# The phases every synthetic host goes through, and the failed host's outline.
python3 "$HERE/png_check.py" "$T/shot.png" 0.02 '#8c6bb1' '#f28e2b' '#4e79a7' '#59a14f' || fail "screenshot check"
ok "$hosts hosts rendered by $(chromium --version 2>/dev/null)"
