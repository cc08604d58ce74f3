# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Bash helpers to run the fake API server: certificates, start, stop.
#
# Source this file, then:
#   fake_apiserver_certs DIR      # DIR/{ca.crt,ca.key,server.crt,server.key,
#                                 #  token,other-ca.crt}; SAN 127.0.0.1, localhost
#   fake_apiserver_start DIR [fake_apiserver.py args...]
#                                 # sets FAKE_APISERVER_PID and _PORT, writes
#                                 # DIR/apiserver.pid, DIR/port; log DIR/apiserver.log
#   fake_apiserver_control DIR METHOD PATH [JSON]   # curl the /_control API
#   fake_apiserver_stop DIR       # kills the pid in DIR/apiserver.pid
#   fake_apiserver_restart DIR [args...]
#                                 # stop, then start again on the SAME port
#                                 # (same certs and token): a restarted server
# Extra SANs: FAKE_APISERVER_SAN="IP:10.233.0.3,DNS:kubernetes.default.svc".
# Defaults: --bind 127.0.0.1 --port 0 (ephemeral).

FAKE_APISERVER_PY="${FAKE_APISERVER_PY:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/fake_apiserver.py}"

fake_apiserver_certs() {
  local dir=$1
  mkdir -p "$dir"
  local san="IP:127.0.0.1,DNS:localhost${FAKE_APISERVER_SAN:+,$FAKE_APISERVER_SAN}"
  (
    cd "$dir" || exit 1
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -days 30 -subj /CN=fake-apiserver-ca -keyout ca.key -out ca.crt 2>/dev/null &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -subj /CN=kube-apiserver -keyout server.key -out server.csr 2>/dev/null &&
    printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" > san.ext &&
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -days 30 -extfile san.ext -out server.crt 2>/dev/null &&
    # A CA that signed nothing here: for "wrong CA" tests.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -days 30 -subj /CN=other-ca -keyout other-ca.key -out other-ca.crt 2>/dev/null &&
    printf 'fake-token-%s' "$(openssl rand -hex 12)" > token &&
    chmod 600 token ca.key server.key other-ca.key
  ) || { echo "fake_apiserver_certs: openssl failed" >&2; return 1; }
}

fake_apiserver_start() {
  local dir=$1; shift
  rm -f "$dir/port"
  # setsid: own session, so the caller's job control and signals stay apart;
  # python is exec'd in place, so $! is the server's pid.
  setsid /usr/bin/python3 "$FAKE_APISERVER_PY" --bind 127.0.0.1 --port 0 \
    --cert "$dir/server.crt" --key "$dir/server.key" \
    --token-file "$dir/token" --port-file "$dir/port" "$@" \
    >> "$dir/apiserver.log" 2>&1 < /dev/null &
  FAKE_APISERVER_PID=$!
  echo "$FAKE_APISERVER_PID" > "$dir/apiserver.pid"
  local _
  for _ in $(seq 1 100); do  # up to 5 s; it normally takes ~0.1 s
    if [ -s "$dir/port" ]; then
      FAKE_APISERVER_PORT=$(cat "$dir/port")
      export FAKE_APISERVER_PID FAKE_APISERVER_PORT
      return 0
    fi
    kill -0 "$FAKE_APISERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "fake_apiserver_start: server did not start; log:" >&2
  cat "$dir/apiserver.log" >&2
  fake_apiserver_stop "$dir"
  return 1
}

fake_apiserver_control() {
  local dir=$1 method=$2 path=$3 body=${4:-}
  local port
  port=$(cat "$dir/port")
  curl -sS --fail-with-body --cacert "$dir/ca.crt" \
    -H "Authorization: Bearer $(cat "$dir/token")" \
    -H 'Content-Type: application/json' -X "$method" \
    ${body:+--data "$body"} "https://127.0.0.1:$port$path"
}

fake_apiserver_stop() {
  local dir=$1 pid
  pid=$(cat "$dir/apiserver.pid" 2>/dev/null) || return 0
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    local _
    for _ in $(seq 1 40); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  rm -f "$dir/apiserver.pid"
}

fake_apiserver_restart() {
  local dir=$1; shift
  local port rv
  port=$(cat "$dir/port") || return 1
  # Like kube-apiserver over the same etcd: versions go on from where they
  # were, and the new watch cache has no history (older RVs get 410).
  rv=$(fake_apiserver_control "$dir" GET /api/v1/pods?resourceVersion=0 |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])') || rv=
  fake_apiserver_stop "$dir"
  # The last --port wins in argparse; allow_reuse_address lets the new
  # server bind while old connections sit in TIME_WAIT.
  fake_apiserver_start "$dir" --port "$port" ${rv:+--start-rv $((rv + 1))} "$@"
}
