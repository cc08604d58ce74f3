#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Sources images/ompi-env.sh under sh (dash where installed) with a fake
# environment and checks the Open MPI 5 translation of the operators'
# OMPI_MCA_ settings to PRTE_MCA_ names: set when missing (one stderr line
# each), kept when already set (with a note), nothing under Open MPI 4,
# nothing more when sourced twice; then detection through a fake prte_info
# on PATH, and shellcheck -s sh on the script.
# Usage: ompi_env_test.sh [REPO_DIR]
# shellcheck disable=SC2016 # Single-quoted $VARS are for the inner shell.
set -euo pipefail

repo="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
script="$repo/images/ompi-env.sh"
shell="$(command -v dash || command -v sh)"
# shellcheck source=tests/lib/testlib.sh
source "$repo/tests/lib/testlib.sh"
TEST_KEEP_GOING=1
tmp="$(mktemp -d /tmp/k8s-deploy-ompienv.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

# run SOURCES [VAR=value...]: sources the script SOURCES times in a clean
# environment; stdout gets the OMPI_/PRTE_ variables, $tmp/err stderr.
run() {
  local n="$1"
  shift
  env -i PATH="${FAKE_PATH:-/usr/bin:/bin}" "$@" "$shell" -c '
    i=0; while [ "$i" -lt "$1" ]; do . "$2"; i=$((i + 1)); done
    env | grep -E "^(OMPI|PRTE)_MCA_" | LC_ALL=C sort' sh "$n" "$script" 2>"$tmp/err"
}

operator=(OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile
          OMPI_MCA_plm_rsh_agent=k8s-agent
          "OMPI_MCA_plm_rsh_args=-o ConnectionAttempts=10"
          OMPI_MCA_orte_set_default_slots=2
          OMPI_MCA_orte_keep_fqdn_hostnames=true)
ompi_vars="$(printf '%s\n' "${operator[@]}" | LC_ALL=C sort)"
prte_vars="PRTE_MCA_plm_ssh_agent=k8s-agent
PRTE_MCA_plm_ssh_args=-o ConnectionAttempts=10
PRTE_MCA_prte_default_hostfile=/etc/mpi/hostfile
PRTE_MCA_prte_set_default_slots=2"
translated="$(printf '%s\n%s\n' "$ompi_vars" "$prte_vars" | LC_ALL=C sort)"

# --- Open MPI 5: every PRTE name set from its OMPI value, one line each.
out="$(run 1 K8S_AGENT_OMPI_MAJOR=5 "${operator[@]}")"
expect_eq "5.x: PRTE names set from the OMPI values" "$translated" "$out"
expect_eq "5.x: hostfile line" \
  "k8s-agent: Open MPI 5 (PRRTE) ignores OMPI_MCA_orte_default_hostfile; set PRTE_MCA_prte_default_hostfile=/etc/mpi/hostfile" \
  "$(grep default_hostfile "$tmp/err")"
for pair in plm_rsh_agent:plm_ssh_agent plm_rsh_args:plm_ssh_args orte_set_default_slots:prte_set_default_slots; do
  expect_eq "5.x: one line for OMPI_MCA_${pair%%:*}" 1 \
    "$(grep -c "ignores OMPI_MCA_${pair%%:*}; set PRTE_MCA_${pair#*:}=" "$tmp/err")"
done
expect_eq "5.x: keep_fqdn_hostnames noted, not translated" 1 \
  "$(grep -c 'ignores OMPI_MCA_orte_keep_fqdn_hostnames; not translated' "$tmp/err")"
expect_eq "5.x: 5 stderr lines" 5 "$(wc -l <"$tmp/err")"

# --- Sourced twice: same environment, no more lines.
out="$(run 2 K8S_AGENT_OMPI_MAJOR=5 "${operator[@]}")"
expect_eq "5.x twice: same environment" "$translated" "$out"
expect_eq "5.x twice: still 5 stderr lines" 5 "$(wc -l <"$tmp/err")"

# --- PRTE name already set and different: kept, and the note says so.
out="$(run 1 K8S_AGENT_OMPI_MAJOR=5 OMPI_MCA_plm_rsh_agent=k8s-agent \
  PRTE_MCA_plm_ssh_agent=/opt/k8s-agent/k8s-agent)"
expect_eq "5.x: set PRTE name kept" \
  "OMPI_MCA_plm_rsh_agent=k8s-agent
PRTE_MCA_plm_ssh_agent=/opt/k8s-agent/k8s-agent" "$out"
expect_eq "5.x: note names the winner" \
  "k8s-agent: Open MPI 5 (PRRTE) ignores OMPI_MCA_plm_rsh_agent=k8s-agent; PRTE_MCA_plm_ssh_agent=/opt/k8s-agent/k8s-agent is already set and is the one used" \
  "$(cat "$tmp/err")"
# Equal values: nothing to say.
run 1 K8S_AGENT_OMPI_MAJOR=5 OMPI_MCA_plm_rsh_agent=k8s-agent PRTE_MCA_plm_ssh_agent=k8s-agent >/dev/null
expect_eq "5.x: equal values, silent" "" "$(cat "$tmp/err")"

# --- Open MPI 4: nothing changed, nothing printed.
out="$(run 1 K8S_AGENT_OMPI_MAJOR=4 "${operator[@]}")"
expect_eq "4.x: environment unchanged" "$ompi_vars" "$out"
expect_eq "4.x: nothing printed" "" "$(cat "$tmp/err")"

# --- Detection without the override: a fake prte_info on PATH means 5.x;
# a fake ompi_info saying v4 means 4.x.
mkdir -p "$tmp/bin5" "$tmp/bin4"
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin5/prte_info"
printf '#!/bin/sh\necho "mpirun (Open MPI) 4.1.4"\necho\necho "Open MPI v4.1.4"\n' >"$tmp/bin4/ompi_info"
chmod +x "$tmp/bin5/prte_info" "$tmp/bin4/ompi_info"
out="$(FAKE_PATH="$tmp/bin5:/usr/bin:/bin" run 1 OMPI_MCA_plm_rsh_agent=k8s-agent)"
expect_eq "prte_info on PATH: translated" \
  "OMPI_MCA_plm_rsh_agent=k8s-agent
PRTE_MCA_plm_ssh_agent=k8s-agent" "$out"
out="$(FAKE_PATH="$tmp/bin4:/bin" run 1 OMPI_MCA_plm_rsh_agent=k8s-agent)"
expect_eq "ompi_info v4: untouched" "OMPI_MCA_plm_rsh_agent=k8s-agent" "$out"
expect_eq "ompi_info v4: silent" "" "$(cat "$tmp/err")"

# --- Sourced by bash under set -euo pipefail, as the launcher entrypoint does.
out="$(env -i PATH=/usr/bin:/bin K8S_AGENT_OMPI_MAJOR=5 OMPI_MCA_plm_rsh_agent=k8s-agent \
  bash -c 'set -euo pipefail; . "$1"; echo "$PRTE_MCA_plm_ssh_agent"' sh "$script" 2>/dev/null)"
expect_eq "bash set -euo pipefail: sourced" k8s-agent "$out"

if command -v shellcheck >/dev/null; then
  if shellcheck -s sh "$script"; then echo "ok: shellcheck -s sh"; else fail "shellcheck -s sh $script"; fi
else
  echo "note: shellcheck not installed; skipped"
fi

testlib_exit "all ompi-env checks passed"
