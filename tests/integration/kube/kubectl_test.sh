#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Proves the fake API server satisfies the real kubectl (1.32): get pods
# (Table with STATUS), get pod -o json, get pod -w seeing Pending->Running,
# and a wrong token -> Unauthorized.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../fake_apiserver/fake_apiserver_lib.sh
source "$HERE/../../fake_apiserver/fake_apiserver_lib.sh"

KUBECTL=${KUBECTL:-/usr/bin/kubectl}
if [ ! -x "$KUBECTL" ]; then
  echo "SKIP: $KUBECTL not found"
  exit 0
fi

DIR=$(mktemp -d /tmp/k8s-kubectl-test-XXXXXX)
WATCH_PID=
cleanup() {
  [ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null && wait "$WATCH_PID" 2>/dev/null
  fake_apiserver_stop "$DIR"
  rm -rf "$DIR"
}
trap cleanup EXIT

passed=0
failed=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then
    echo "ok   $name"; passed=$((passed + 1))
  else
    echo "FAIL $name"; failed=$((failed + 1))
  fi
}

fake_apiserver_certs "$DIR" || exit 1
cat > "$DIR/pods.json" <<'JSON'
[{"name": "w0", "phase": "Running", "podIP": "10.233.0.10", "labels": {"role": "worker"}},
 {"name": "w1", "phase": "Pending", "labels": {"role": "worker"}}]
JSON
fake_apiserver_start "$DIR" --pods "$DIR/pods.json" || exit 1
K=("$KUBECTL" --server "https://127.0.0.1:$FAKE_APISERVER_PORT"
   --certificate-authority "$DIR/ca.crt" --token "$(cat "$DIR/token")"
   --cache-dir "$DIR/kcache" --request-timeout 10s)

"${K[@]}" get pods > "$DIR/get.out" 2>&1
cat "$DIR/get.out"
check "get pods shows STATUS" grep -Eq '^NAME +READY +STATUS' "$DIR/get.out"
check "get pods: w0 1/1 Running" grep -Eq '^w0 +1/1 +Running' "$DIR/get.out"
check "get pods: w1 Pending" grep -Eq '^w1 +0/1 +(Pending|ContainerCreating)' "$DIR/get.out"

"${K[@]}" get pod w0 -o json > "$DIR/w0.json" 2>&1
check "get pod w0 -o json" /usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["metadata"]["name"] == "w0", p
assert p["status"]["phase"] == "Running"
assert p["status"]["podIP"] == "10.233.0.10"
assert all("imageID" in c for c in p["status"]["containerStatuses"])
' "$DIR/w0.json"

"${K[@]}" get pod nope > "$DIR/nope.out" 2>&1
check "get pod nope: NotFound" grep -q 'pods "nope" not found' "$DIR/nope.out"

# Watch w1 while the control API flips it to Running.
timeout 15 "${K[@]}" get pod w1 -w > "$DIR/watch.out" 2>&1 &
WATCH_PID=$!
for _ in $(seq 1 100); do
  grep -q Pending "$DIR/watch.out" 2>/dev/null && break
  sleep 0.1
done
fake_apiserver_control "$DIR" PUT /_control/pods/default/w1 \
  '{"phase": "Running", "podIP": "10.233.0.11"}' > /dev/null
for _ in $(seq 1 100); do
  grep -q Running "$DIR/watch.out" 2>/dev/null && break
  sleep 0.1
done
kill "$WATCH_PID" 2>/dev/null
wait "$WATCH_PID" 2>/dev/null
WATCH_PID=
cat "$DIR/watch.out"
check "get pod w1 -w: Pending then Running" /usr/bin/python3 -c '
import re, sys
text = open(sys.argv[1]).read()
p, r = text.find("Pending"), text.find("Running")
sys.exit(0 if 0 <= p < r else 1)
' "$DIR/watch.out"

"$KUBECTL" --server "https://127.0.0.1:$FAKE_APISERVER_PORT" \
  --certificate-authority "$DIR/ca.crt" --token wrong-token \
  --cache-dir "$DIR/kcache-wrong" get pods > "$DIR/wrong.out" 2>&1
rc=$?
tail -1 "$DIR/wrong.out"
check "wrong token: rc 1" test "$rc" -eq 1
check "wrong token: must be logged in" grep -q 'You must be logged in to the server' "$DIR/wrong.out"

"$KUBECTL" --server "https://127.0.0.1:$FAKE_APISERVER_PORT" \
  --certificate-authority "$DIR/other-ca.crt" --token "$(cat "$DIR/token")" \
  --cache-dir "$DIR/kcache-ca" get pods > "$DIR/ca.out" 2>&1
check "wrong CA: x509" grep -q 'x509: certificate signed by unknown authority' "$DIR/ca.out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
