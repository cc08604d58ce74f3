#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kubeconfig features kubectl 1.20+ honours (exec
# credential plugins, proxy-url, tls-server-name, basic auth, system trust),
# through the k8s-agent binary against the fake API server, with
# agent_lib.sh's setup.
#   kubeconfig_test.sh AGENT_BINARY SCENARIO
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

# The kubeconfig alone must decide: no K8S_AGENT_* cluster settings.
unset K8S_AGENT_SERVER K8S_AGENT_TOKEN_FILE K8S_AGENT_CERTIFICATE_AUTHORITY
export XDG_CACHE_HOME="$T/cache"
SERVER="https://127.0.0.1:$FAKE_APISERVER_PORT"

# kubeconfig CLUSTER_LINES USER_LINES: writes $T/kubeconfig (each argument
# is YAML indented 4 spaces, one key per line; the server is $KC_SERVER,
# else the fake API server).
kubeconfig() {
  cat > "$T/kubeconfig" <<KC
apiVersion: v1
kind: Config
current-context: dev
contexts:
- name: dev
  context: {cluster: c1, user: u1, namespace: default}
clusters:
- name: c1
  cluster:
    server: ${KC_SERVER:-$SERVER}
$1
users:
- name: u1
  user:
$2
KC
}
CA_LINE="    certificate-authority: $T/api/ca.crt"
TOKEN_LINE="    tokenFile: $T/api/token"

# A plugin that counts its runs in $T/runs and prints the server's token,
# valid for an hour (after a first bad one when $T/bad-first exists).
fake_plugin() {
  cat > "$T/plugin.sh" <<PL
#!/bin/sh
echo run >> "$T/runs"
printf '%s\n' "\$KUBERNETES_EXEC_INFO" > "$T/exec-info"
exp=\$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
tok=\$(cat "$T/api/token")
if [ -e "$T/bad-first" ] && [ "\$(wc -l < "$T/runs")" -eq 1 ]; then tok=wrong; fi
sleep 0.3
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}\n' "\$tok" "\$exp"
PL
  chmod +x "$T/plugin.sh"
}
EXEC_LINES="    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin.sh
      args: [--cluster, c1]
      interactiveMode: Never"

# A plugin that starts a child and hangs, as an SSO helper waiting for a
# login does: $T/plugin.pid and $T/child.pid say who to look for after.
hanging_plugin() {
  printf '#!/bin/sh\necho $$ > "%s/plugin.pid"\nsleep 300 &\necho $! > "%s/child.pid"\nwait\n' "$T" "$T" > "$T/plugin.sh"
  chmod +x "$T/plugin.sh"
}
plugin_started() { [ -s "$T/child.pid" ]; }
# gone PID: no such process, or only its zombie (its parent, killed with
# it, leaves the reaping to init).
gone() { [ ! -e "/proc/$1" ] || [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" = Z ]; }
plugin_gone() {
  wait_for 2 gone "$(cat "$T/plugin.pid")" || fail "plugin $(cat "$T/plugin.pid") outlived the agent"
  wait_for 2 gone "$(cat "$T/child.pid")" || fail "the plugin's child $(cat "$T/child.pid") outlived the agent"
}

wait_only() {  # wait_only [ENV=...]: one --wait-only run for w-0; sets RC
  env "$@" "$AGENT" "${SSH_ARGS[@]}" --kubeconfig "$T/kubeconfig" --timeout 10s \
    --wait-only w-0 > "$T/out" 2> "$T/err"
  RC=$?
}

case "$SCENARIO" in
exec-plugin-shared)
  # 8 agents of one job start at once: the plugin runs once, the others
  # read its credential from the cache.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  fake_plugin
  kubeconfig "$CA_LINE" "$EXEC_LINES"
  pids=()
  for i in 1 2 3 4 5 6 7 8; do
    "$AGENT" "${SSH_ARGS[@]}" --kubeconfig "$T/kubeconfig" --timeout 20s \
      --wait-only w-0 > "$T/out.$i" 2> "$T/err.$i" &
    pids+=($!)
  done
  for i in 0 1 2 3 4 5 6 7; do
    wait "${pids[$i]}" || { cat "$T/err.$((i + 1))" > "$T/err"; fail "agent $((i + 1)) failed"; }
  done
  runs=$(wc -l < "$T/runs")
  [ "$runs" -eq 1 ] || fail "plugin ran $runs times for 8 agents"
  [ "$(json_get "$T/exec-info" kind)" = ExecCredential ] || fail "exec info: $(cat "$T/exec-info")"
  [ "$(json_get "$T/exec-info" spec.interactive)" = false ] || fail "exec info: $(cat "$T/exec-info")"
  grep -q '"cluster"' "$T/exec-info" && fail "cluster info without provideClusterInfo"
  mode=$(stat -c %a "$T/cache/k8s-agent")
  [ "$mode" = 700 ] || fail "cache dir mode $mode"
  grep -rq "$(cat "$T/api/token")" "$T"/err.* && fail "token logged"
  # A ninth agent later reuses the cached credential too.
  wait_only
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(wc -l < "$T/runs")" -eq 1 ] || fail "plugin re-ran for a cached credential"
  ok "8+1 agents, 1 plugin run"
  ;;
exec-plugin-401)
  # The first credential is refused (401): dropped, the plugin re-runs once.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  fake_plugin
  touch "$T/bad-first"
  kubeconfig "$CA_LINE" "$EXEC_LINES"
  wait_only
  [ $RC -eq 0 ] || fail "rc $RC"
  runs=$(wc -l < "$T/runs")
  [ "$runs" -eq 2 ] || fail "plugin ran $runs times"
  ok "re-ran after 401"
  ;;
exec-plugin-fails)
  printf '#!/bin/sh\necho "first line" >&2\nprintf "token expired\\033[31m; run login\\n" >&2\nexit 3\n' > "$T/plugin.sh"
  chmod +x "$T/plugin.sh"
  kubeconfig "$CA_LINE" "$EXEC_LINES"
  wait_only
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -qF "plugin.sh exited with status 3: \"token expired\\x1b[31m; run login\"" "$T/err" || fail "message: $(cat "$T/err")"
  kubeconfig "$CA_LINE" "    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: no-such-plugin-k8s
      installHint: install it with apt-get install no-such-plugin"
  wait_only
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'no-such-plugin-k8s.*not found.*installHint: install it with apt-get' "$T/err" || fail "message: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
exec-plugin-hangs)
  # A hung plugin: --timeout 3s ends the agent at 3 s, naming the plugin,
  # and the plugin and its child are gone (it used to take 60 s).
  hanging_plugin
  kubeconfig "$CA_LINE" "$EXEC_LINES"
  t0=$(date +%s%N)
  "$AGENT" "${SSH_ARGS[@]}" --kubeconfig "$T/kubeconfig" --timeout 3s \
    --wait-only w-0 > "$T/out" 2> "$T/err"
  RC=$?
  ms=$(ms_since "$t0")
  [ $RC -eq 255 ] || fail "rc $RC"
  [ "$ms" -lt 4500 ] || fail "took $ms ms for --timeout 3s"
  grep -q "timed out after 3.0s waiting for the API credential: exec plugin $T/./plugin.sh (.*kubeconfig: user \"u1\") has not printed a credential after 3" "$T/err" || fail "message: $(cat "$T/err")"
  plugin_gone
  ok "$ms ms: $(cat "$T/err")"
  ;;
exec-plugin-sigterm)
  # SIGTERM while the plugin hangs ends the agent at once, plugin and all.
  hanging_plugin
  kubeconfig "$CA_LINE" "$EXEC_LINES"
  "$AGENT" "${SSH_ARGS[@]}" --kubeconfig "$T/kubeconfig" --timeout 60s \
    --wait-only w-0 > "$T/out" 2> "$T/err" &
  AGENT_PID=$!
  wait_for 10 plugin_started || fail "the plugin did not start"
  t0=$(date +%s%N)
  kill -TERM "$AGENT_PID"
  wait "$AGENT_PID"
  RC=$?
  ms=$(ms_since "$t0")
  AGENT_PID=
  [ $RC -eq 143 ] || fail "rc $RC, want 143"
  [ "$ms" -lt 1000 ] || fail "took $ms ms after SIGTERM"
  plugin_gone
  ok "ended $ms ms after SIGTERM"
  ;;
exec-plugin-lock-wait)
  # A second agent waiting for the first one's plugin (the shared cache's
  # lock) still ends at its own --timeout 3s, saying what it waited for.
  hanging_plugin
  kubeconfig "$CA_LINE" "$EXEC_LINES"
  "$AGENT" "${SSH_ARGS[@]}" --kubeconfig "$T/kubeconfig" --timeout 60s \
    --wait-only w-0 > "$T/out.1" 2> "$T/err.1" &
  AGENT_PID=$!
  wait_for 10 plugin_started || fail "the plugin did not start"
  t0=$(date +%s%N)
  "$AGENT" "${SSH_ARGS[@]}" --kubeconfig "$T/kubeconfig" --timeout 3s \
    --wait-only w-0 > "$T/out" 2> "$T/err"
  RC=$?
  ms=$(ms_since "$t0")
  [ $RC -eq 255 ] || fail "rc $RC"
  [ "$ms" -lt 4500 ] || fail "took $ms ms for --timeout 3s"
  grep -q "waiting for the API credential: another agent's run of exec plugin $T/./plugin.sh .* has held .*\.lock for 3" "$T/err" || fail "message: $(cat "$T/err")"
  [ "$(wc -l < "$T/runs" 2>/dev/null || echo 0)" -le 1 ] || fail "the second agent ran the plugin too"
  kill -TERM "$AGENT_PID"
  wait "$AGENT_PID"
  AGENT_PID=
  plugin_gone
  ok "$ms ms: $(cat "$T/err")"
  ;;
exec-plugin-rejected)
  # The plugin's token is refused every time: the message names the plugin
  # and its two runs, not "no credentials configured".
  fake_plugin
  sed -i 's/^tok=.*/tok=wrong/' "$T/plugin.sh"
  kubeconfig "$CA_LINE" "$EXEC_LINES"
  wait_only
  [ $RC -eq 255 ] || fail "rc $RC"
  [ "$(wc -l < "$T/runs")" -eq 2 ] || fail "plugin ran $(wc -l < "$T/runs") times"
  grep -q "rejected the credentials (the token from exec plugin $T/./plugin.sh (.*user \"u1\"); the plugin ran 2 times in this agent)" "$T/err" || fail "message: $(cat "$T/err")"
  grep -q "no credentials configured" "$T/err" && fail "message: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
exec-plugin-env)
  # client-go runs the plugin per process with its environment: another
  # AWS_PROFILE is another identity, never the first one's cached token.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  fake_plugin
  kubeconfig "$CA_LINE" "$EXEC_LINES"
  wait_only AWS_PROFILE=dev
  [ $RC -eq 0 ] || fail "dev: rc $RC"
  wait_only AWS_PROFILE=prod
  [ $RC -eq 0 ] || fail "prod: rc $RC"
  [ "$(wc -l < "$T/runs")" -eq 2 ] || fail "plugin ran $(wc -l < "$T/runs") times for two profiles"
  wait_only AWS_PROFILE=dev
  [ $RC -eq 0 ] || fail "dev again: rc $RC"
  [ "$(wc -l < "$T/runs")" -eq 2 ] || fail "dev's cached credential was not reused"
  ok "one run per environment"
  ;;
cert-key-mismatch)
  # A client certificate with another pair's key: kubectl's words and both
  # files, before any handshake (it was "x509: certificate verify failed").
  kubeconfig "$CA_LINE" "    client-certificate: $T/api/server.crt
    client-key: $T/api/other-ca.key"
  wait_only
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q "tls: private key does not match public key: client-key $T/api/other-ca.key is not the key of client-certificate $T/api/server.crt" "$T/err" || fail "message: $(cat "$T/err")"
  grep -q "certificate verify failed" "$T/err" && fail "message: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
proxy-url)
  # proxy-url is used (the proxy sees the CONNECT) even with NO_PROXY.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  /usr/bin/python3 "$HERE/connect_proxy.py" tunnel "$T/proxy.ready" "$T/proxy.log" &
  AFTER_PIDS+=($!)
  wait_for 5 test -s "$T/proxy.ready" || fail "proxy did not start"
  PX=$(cat "$T/proxy.ready")
  kubeconfig "$CA_LINE
    proxy-url: http://127.0.0.1:$PX" "$TOKEN_LINE"
  wait_only NO_PROXY=127.0.0.1 no_proxy=127.0.0.1
  [ $RC -eq 0 ] || fail "rc $RC"
  grep -q "CONNECT 127.0.0.1:$FAKE_APISERVER_PORT" "$T/proxy.log" || fail "proxy not used: $(cat "$T/proxy.log" 2>&1)"
  ok "via proxy"
  ;;
proxy-denied)
  /usr/bin/python3 "$HERE/connect_proxy.py" deny "$T/proxy.ready" "$T/proxy.log" &
  AFTER_PIDS+=($!)
  wait_for 5 test -s "$T/proxy.ready" || fail "proxy did not start"
  PX=$(cat "$T/proxy.ready")
  kubeconfig "$CA_LINE
    proxy-url: http://alice:s3cret@127.0.0.1:$PX" "$TOKEN_LINE"
  wait_only
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q "proxy 127.0.0.1:$PX refused to tunnel.*HTTP 407" "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 's3cret' "$T/err" && fail "proxy password shown"
  # HTTPS_PROXY (no proxy-url) pointing at a closed port: named too.
  CLOSED=$(free_port)
  kubeconfig "$CA_LINE" "$TOKEN_LINE"
  wait_only HTTPS_PROXY="http://127.0.0.1:$CLOSED" NO_PROXY= no_proxy=
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q "proxy 127.0.0.1:$CLOSED could not be used" "$T/err" || fail "message: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
tls-server-name)
  # A server at 127.0.0.2, whose certificate names only 127.0.0.1 and
  # localhost: tls-server-name localhost makes it verify, as in kubectl.
  fake_apiserver_certs "$T/api2" || fail "certs"
  printf '[]' > "$T/pods2.json"
  fake_apiserver_start "$T/api2" --pods "$T/pods2.json" --bind 127.0.0.2 \
    --token-file "$T/api/token" || fail "apiserver 2"
  AFTER_PIDS+=("$FAKE_APISERVER_PID")
  P2=$FAKE_APISERVER_PORT
  start_sshd
  KC_SERVER="https://127.0.0.2:$P2" kubeconfig "    certificate-authority: $T/api2/ca.crt
    tls-server-name: localhost" "$TOKEN_LINE"
  "$AGENT" "${SSH_ARGS[@]}" --kubeconfig "$T/kubeconfig" --timeout 2s w-0 true > "$T/out" 2> "$T/err"
  RC=$?
  grep -qi 'x509\|certificate' "$T/err" && fail "TLS failed: $(cat "$T/err")"
  total=$(curl -sS --cacert "$T/api2/ca.crt" --resolve "localhost:$P2:127.0.0.2" \
    -H "Authorization: Bearer $(cat "$T/api/token")" "https://localhost:$P2/_control/stats" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
  [ "${total:-0}" -gt 0 ] || fail "no request reached the server: $(cat "$T/err")"
  # The name is what the certificate is checked against: a wrong one fails
  # even where the URL's host would verify.
  kubeconfig "$CA_LINE
    tls-server-name: wrong.example" "$TOKEN_LINE"
  wait_only
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'certificate verify failed.*tls-server-name "wrong.example"' "$T/err" || fail "message: $(cat "$T/err")"
  fake_apiserver_stop "$T/api2"
  ok "$(cat "$T/err")"
  ;;
basic-auth)
  kubeconfig "$CA_LINE" "    username: admin
    password: hunter2"
  wait_only
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'basic auth (username/password), which k8s-agent does not support' "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 'hunter2' "$T/err" && fail "password shown"
  ok "$(cat "$T/err")"
  ;;
system-trust)
  # No CA in the kubeconfig: $SSL_CERT_FILE is the trust, as for kubectl.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  kubeconfig "" "$TOKEN_LINE"
  wait_only SSL_CERT_FILE="$T/api/ca.crt"
  [ $RC -eq 0 ] || fail "with SSL_CERT_FILE: rc $RC"
  wait_only -u SSL_CERT_FILE -u SSL_CERT_DIR
  [ $RC -eq 255 ] || fail "without: rc $RC"
  grep -q "certificate verify failed.*$SERVER.*certificate-authority" "$T/err" || fail "message: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
*)
  fail "unknown scenario"
  ;;
esac
