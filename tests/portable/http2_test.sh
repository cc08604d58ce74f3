#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The agent's libcurl speaks HTTP/2 to a server that offers only h2 (ALPN):
# nghttpd (Debian's nghttp2-server) serves a Failed pod; the agent must read
# it and fail at once naming the reason. (The fake API server, HTTP/1.1
# only, covers servers without h2.)
#
# usage: http2_test.sh K8S_AGENT_BINARY
set -uo pipefail
agent="$1"
# shellcheck source=tests/lib/testlib.sh
source "$(dirname "$0")/../lib/testlib.sh"
command -v nghttpd >/dev/null || skip "nghttpd missing (apt-get install nghttp2-server; scripts/deps.sh installs it)"
t="$(mktemp -d /tmp/k8s-agent-h2.XXXXXX)"
pid=
on_exit() { rm -rf "$t"; }
trap testlib_on_exit EXIT
# fail's evidence.
on_fail() {
  echo "--- nghttpd log"
  head -c 4000 "$t/log"
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$t/key" -out "$t/crt" \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -days 1 2>/dev/null || fail "openssl req"
# The agent's lookup is a name-selected LIST; nghttpd serves a file and
# ignores the query, so the file at the collection's path is that answer.
mkdir -p "$t/doc/api/v1/namespaces/default"
printf '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"w-0","namespace":"default","resourceVersion":"5"},"status":{"phase":"Failed","reason":"Evicted","message":"served over h2"}}]}' \
  >"$t/doc/api/v1/namespaces/default/pods"
echo token >"$t/token"
port="$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
nghttpd -v -a 127.0.0.1 -d "$t/doc" "$port" "$t/key" "$t/crt" >"$t/log" 2>&1 &
pid=$!
kill_on_exit "$pid"
for _ in $(seq 1 200); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || fail "nghttpd exited"
  sleep 0.05
done

out="$(env -u KUBECONFIG -u KUBERNETES_SERVICE_HOST K8S_AGENT_SERVER="https://127.0.0.1:$port" \
  K8S_AGENT_TOKEN_FILE="$t/token" K8S_AGENT_NAMESPACE=default K8S_AGENT_CERTIFICATE_AUTHORITY="$t/crt" \
  "$agent" --timeout 20 w-0 true 2>&1)"
rc=$?
[[ $rc -eq 255 ]] || fail "exit $rc: $out"
[[ "$out" == *"is Failed: Evicted: served over h2"* ]] || fail "message: $out"
grep -q ':path: /api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dw-0' "$t/log" ||
  fail "nghttpd saw no HTTP/2 lookup of the pod"
echo "ok: HTTP/2 lookup of the pod; $out"
