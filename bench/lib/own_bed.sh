#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# For the bench scripts that run on a bed of their own (cpu_breakdown.sh, tree_model.sh): the agent
# binary, built with the default preset when it is missing; a scratch directory RAW; a bed whose workers
# all run their sshd; all of it removed on exit. Sourced with REPO and AGENT set.

# shellcheck source=tests/bed/bed.sh disable=SC1091
. "$REPO/tests/bed/bed.sh"
# shellcheck disable=SC2034 # read by bed.sh
BED_QUIET=1

# own_bed_up NAME N: NAME (the script's) prefixes the errors; sets AGENT to its absolute path, and RAW.
own_bed_up() {
  local name="$1" n="$2"
  if [[ ! -x "$AGENT" ]]; then
    (cd "$REPO" && cmake --preset default >/dev/null && cmake --build --preset default --target k8s-agent >/dev/null)
  fi
  AGENT="$(realpath "$AGENT")"
  RAW="$(mktemp -d /tmp/k8s-bench.XXXXXX)"
  # Readable by the pods' processes (valgrind writes its output there as the bed's user).
  chmod 755 "$RAW"
  bed_gc
  # The bed's own trap would replace this one and leave RAW behind.
  BED_NO_TRAP=1
  trap own_bed_down EXIT
  trap 'own_bed_down; trap - INT; kill -INT $$' INT
  trap 'own_bed_down; trap - TERM; kill -TERM $$' TERM
  bed_up "$n" || { echo "$name: the bed did not come up" >&2 && exit 1; }
  bed_all_ready || { echo "$name: the workers did not become ready" >&2 && exit 1; }
}

own_bed_down() {
  bed_down
  rm -rf "$RAW"
}
