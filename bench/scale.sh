#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# 1,000 hosts simulated: API load of one job's agents under an APF-like limit.
#
# usage: sudo bench/scale.sh [--hosts N] [--wave S] [--sshds K] [--apf-seats N] [--apf-queue M]
#                            [--apf-queue-wait S] [--names statefulset|jobset] [--agent PATH] [--out DIR]
#   defaults: 1000 hosts, a 30 s wave, 4 sshds, 20 seats, a queue of 50 waiting up to 5 s, Retry-After 1
#
# In a network namespace of its own (loopback only, removed on exit): the fake API server with
# --apf-seats, K sshds with a high MaxStartups on 127.0.0.2.. (the point is the API side), N Pending pods
# whose IPs spread over those sshds (--names jobset: a JobSet Indexed Job's pods, found by hostname).
# N `k8s-agent --wait-only HOST` processes start at once (one job's
# agents: one ServiceAccount, one APF flow), the pods become Running in a shuffled wave over S seconds,
# and bench/lib/scale_driver.py measures requests per host, 429s, Running -> ssh_ready (p50/p99), each
# agent's peak RSS and CPU time (wait4), failures, and the fake server's own CPU. Writes
# DIR/scale.json (default bench/results/scale; bench/run.sh clears its raw dir) and prints it.
set -uo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$BENCH_DIR/.." && pwd)"
PY=/usr/bin/python3
AGENT=
OUT="$BENCH_DIR/results/scale"
DRIVER_ARGS=()
while (($#)); do
  case "$1" in
  --agent) AGENT="$2" && shift ;;
  --out) OUT="$2" && shift ;;
  --hosts | --wave | --sshds | --apf-seats | --apf-queue | --apf-queue-wait | --names) DRIVER_ARGS+=("$1" "$2") && shift ;;
  -h | --help) sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//' && exit 0 ;;
  *) sed -n '3,16p' "$0" >&2 && exit 2 ;;
  esac
  shift
done
say() { printf '[scale %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
[[ $EUID -eq 0 ]] || {
  say "needs root (a network namespace): sudo $0"
  exit 1
}
if [[ -z "$AGENT" ]]; then
  build="$REPO/build-bench"
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S "$REPO" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
  fi
  cmake --build "$build" -j2 --target k8s-agent >/dev/null || exit 1
  AGENT="$build/launcher/k8s-agent"
fi
AGENT="$(realpath "$AGENT")"
mkdir -p "$OUT"

D="$(mktemp -d /tmp/k8s-agent-scale.XXXXXX)"
NS="k8sa-scale-$(openssl rand -hex 3)"
# shellcheck disable=SC2317 # run by the EXIT, INT and TERM traps
cleanup() {
  local p
  trap - EXIT INT TERM
  # Anything still inside the namespace (the driver kills its own children; this is the backstop).
  for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
  ip netns del "$NS" 2>/dev/null
  rm -rf "$D"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# shellcheck source=../tests/fake_apiserver/fake_apiserver_lib.sh
. "$REPO/tests/fake_apiserver/fake_apiserver_lib.sh"
fake_apiserver_certs "$D" || exit 1
ssh-keygen -q -t ed25519 -N '' -f "$D/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$D/id_ed25519" || exit 1
cp "$D/id_ed25519.pub" "$D/authorized_keys"
# Every sshd has the one host key; every host name w-* (js-node-*) trusts it.
printf 'w-*,js-node-* %s\n' "$(cut -d' ' -f1,2 "$D/host_key.pub")" >"$D/known_hosts"
mkdir -p /run/sshd

ip netns add "$NS" && ip -n "$NS" link set lo up || exit 1
say "namespace $NS, state $D, agent $AGENT"
# 1,000 clients: the server needs more than 1,024 descriptors, and so does the driver.
# shellcheck disable=SC2016 # expanded by the inner bash
ip netns exec "$NS" bash -c 'ulimit -n "$(ulimit -Hn)"; exec "$@"' _ "$PY" "$BENCH_DIR/lib/scale_driver.py" --dir "$D" \
  --agent "$AGENT" --fake-server "$REPO/tests/fake_apiserver/fake_apiserver.py" --out "$OUT/scale.json" \
  "${DRIVER_ARGS[@]}"
rc=$?
say "done (exit $rc): $OUT/scale.json"
exit $rc
