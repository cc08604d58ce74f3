#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ctest realapi_build (the fixture k8s_realapi, so `ctest -L realapi` or `-L cluster` alone runs it):
# builds the real kube-apiserver cache when it is missing, unless K8S_REALAPI_BUILD=0, within a time budget
# (K8S_REALAPI_BUILD_BUDGET seconds, default 1500), and prints how long it took. Told not to, or when the
# budget runs out (the build's whole process group is then stopped), it skips (77) with the reason, and so
# do the realapi scenarios after it.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
budget="${K8S_REALAPI_BUILD_BUDGET:-1500}"
if "$HERE/apiserver_build.sh" check; then
  d="$("$HERE/apiserver_build.sh" path)"
  echo "real kube-apiserver cached in $d (its cold build took $(cat "$d/.build-seconds" 2>/dev/null || echo '?') s)"
  exit 0
fi
if [[ "${K8S_REALAPI_BUILD:-1}" != 1 ]]; then
  echo "SKIP: real kube-apiserver not built and K8S_REALAPI_BUILD=0: the realapi scenarios will skip." \
    "Build it once, as root, with 'tests/realapi/apiserver_build.sh ensure' (10-35 min cold), or unset" \
    "K8S_REALAPI_BUILD."
  exit 77
fi
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
t0=$SECONDS
echo "$(date +%H:%M:%S): building the real kube-apiserver from Debian's source (~13 min on 2 cores, once)"
# Own session and process group, so the budget can stop debootstrap, apt and the Go build with it.
setsid "$HERE/apiserver_build.sh" ensure >"$out" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  if ((SECONDS - t0 > budget)); then
    kill -TERM -- "-$pid" 2>/dev/null
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    echo "SKIP: building the real kube-apiserver took over ${budget} s (K8S_REALAPI_BUILD_BUDGET) and was" \
      "stopped; the realapi scenarios will skip. The next run starts it again."
    exit 77
  fi
  sleep 1
done
wait "$pid"
rc=$?
((rc == 0)) && echo "built $(cat "$out") in $((SECONDS - t0)) s"
exit $rc
