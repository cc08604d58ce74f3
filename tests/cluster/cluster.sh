#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The cluster tier (label "cluster", tests/cluster/README.md): a real single-node Kubernetes v1.20.2
# (tests/cluster/cluster_lib.sh) with the project's images and manifests, and the agent in real pods.
#
# usage: cluster.sh --state DIR up         start the cluster (the ctest fixture's setup), import the images
#        cluster.sh --state DIR down       stop it and check nothing is left behind (the fixture's cleanup)
#        cluster.sh --state DIR SCENARIO   one scenario (tests/cluster/scenarios.sh) on the running cluster
# Exit 77 (skip) with the reason when the machine cannot run the tier; a scenario skips when `up` did.
# Where `up` could not start for a reason that is not a skip, it fails, and so does every scenario.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ "${1:-}" == --state && -n "${2:-}" ]] || { sed -n '5,9p' "$0" >&2; exit 2; }
CL_STATE="$(realpath -m "$2")"
cmd="${3:-}"
# The saved sysctls and host paths live beside the state dir: `down` removes the state dir, then compares.
CL_SAVED="$CL_STATE.saved"
# shellcheck source=tests/cluster/cluster_lib.sh
source "$HERE/cluster_lib.sh"
# shellcheck source=tests/lib/testlib.sh
source "$HERE/../lib/testlib.sh"
cl_names

# stock_root: the unchanged image of c07_stock_image (tests/bed/minbase_root.sh) cached, or built here when
# missing, unless K8S_SSHD_BUILD=0 (as the portable sshd's test would, which ctest runs later on a cold machine), within
# K8S_SSHD_BUILD_BUDGET seconds (default 900; ~2.5 min cold). Otherwise, or when it cannot be built here,
# $CL_STATE.no-stock says why and only c07 to c10, c12 and c13 skip: the other scenarios need no stock image.
stock_root() {
  local minbase="$HERE/../bed/minbase_root.sh" out rc b0=$SECONDS
  "$minbase" check 2>/dev/null && return 0
  if [[ "${K8S_SSHD_BUILD:-1}" != 1 ]]; then
    echo "the minbase root (the stock image) is not built and K8S_SSHD_BUILD=0: tests/bed/minbase_root.sh ensure" \
      >"$CL_STATE.no-stock"
    return 0
  fi
  out="$(mktemp)"
  # shellcheck source=scripts/lib/cache.sh
  source "$HERE/../../scripts/lib/cache.sh"
  cache_run_budgeted "${K8S_SSHD_BUILD_BUDGET:-900}" "$out" "$minbase" ensure
  rc=$?
  rm -f "$out"
  case $rc in
  0) echo "built the minbase root (the stock image) in $((SECONDS - b0)) s" ;;
  124) echo "building the minbase root took over K8S_SSHD_BUILD_BUDGET and was stopped" >"$CL_STATE.no-stock" ;;
  77) echo "the minbase root cannot be built here (no mirror or no debootstrap)" >"$CL_STATE.no-stock" ;;
  *) return 1 ;;
  esac
}

up() {
  local rc why t0=$SECONDS p
  rm -f "$CL_STATE.skip" "$CL_STATE.failed" "$CL_STATE.no-stock"
  why="$(cl_unavailable)"
  if [[ -n "$why" ]]; then
    echo "$why" >"$CL_STATE.skip"
    echo "SKIP: $why"
    exit 77
  fi
  if ! podman image exists localhost/k8s-agent-worker:latest || ! podman image exists localhost/k8s-agent:latest ||
    ! podman image exists localhost/k8s-agent-launcher:latest; then
    why="the project's images are not built (the images.build test builds them: scripts/images.sh)"
    echo "$why" >"$CL_STATE.skip"
    echo "SKIP: $why"
    exit 77
  fi
  [[ -e "$CL_STATE" ]] && cl_down
  stock_root || { echo "FAIL: building the minbase root (tests/bed/minbase_root.sh ensure) failed"; exit 1; }
  for k in $CL_SYSCTLS; do printf '%s=%s\n' "$k" "$(sysctl -n "$k")"; done >"$CL_SAVED"
  for p in $CL_HOST_PATHS; do [[ -e "$p" ]] && echo "$p"; done >"$CL_SAVED.paths"
  cl_up
  rc=$?
  if ((rc == 0)); then
    bash "$HERE/cluster_images.sh" project "$CL_STATE" &&
      { [[ -f "$CL_STATE.no-stock" ]] || bash "$HERE/cluster_images.sh" stock "$CL_STATE"; }
    rc=$?
  fi
  if ((rc != 0)); then
    echo "cluster did not start (exit $rc): see $CL_STATE/log" >"$CL_STATE.failed"
    for p in "$CL_STATE"/log/*.log; do
      [[ -f "$p" ]] || continue
      echo "--- $(basename "$p")"
      tail -n 15 "$p"
    done
    cat "$CL_STATE.failed"
    exit 1
  fi
  echo "ok: cluster up in $((SECONDS - t0)) s (node Ready after $(cat "$CL_STATE/node-ready-seconds") s);" \
    "images imported; state $CL_STATE"
  cl_kubectl get nodes -o wide
}

down() {
  local left
  cl_down
  [[ -f "$CL_SAVED" ]] || { echo "ok: no cluster was started"; exit 0; }
  left="$(cl_leftovers "$CL_SAVED")"
  rm -f "$CL_SAVED" "$CL_SAVED.paths"
  if [[ -n "$left" ]]; then
    echo "FAIL: the stopped cluster left behind:"
    echo "$left"
    exit 1
  fi
  echo "ok: cluster stopped; no process, mount, netns, cgroup, host path or sysctl change left"
}

case "$cmd" in
up) up ;;
down) down ;;
'') sed -n '5,9p' "$0" >&2; exit 2 ;;
*)
  [[ -f "$CL_STATE.skip" ]] && skip "$(cat "$CL_STATE.skip")"
  [[ -f "$CL_STATE.failed" ]] && fail "$(cat "$CL_STATE.failed")"
  [[ -e "$CL_STATE/up" ]] || fail "no cluster at $CL_STATE (run: cluster.sh --state $CL_STATE up)"
  case "$cmd" in
  c07_* | c08_* | c09_* | c10_* | c12_* | c13_*) [[ -f "$CL_STATE.no-stock" ]] && skip "$(cat "$CL_STATE.no-stock")" ;;
  esac
  # shellcheck source=tests/cluster/scenarios.sh
  source "$HERE/scenarios.sh"
  cs_run "$cmd"
  ;;
esac
