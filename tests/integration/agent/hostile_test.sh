#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Faults and inputs, each compared with what ssh does: the
# k8s-agent binary against the fake API server and a loopback sshd, with
# agent_lib.sh's setup.
#   hostile_test.sh AGENT_BINARY SCENARIO
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

HOSTILE_DIRS=()
hostile_cleanup() {
  cleanup
  for d in ${HOSTILE_DIRS[@]+"${HOSTILE_DIRS[@]}"}; do rm -rf "$d"; done
}
trap hostile_cleanup EXIT

# Starts proxy SCRIPT (of this directory) in front of sshd with its one
# argument; PX is the port it chose itself, known to the agent as w-0's.
start_proxy() {
  local script=$1 arg=$2
  rm -f "$T/proxy.ready"
  /usr/bin/python3 "$HERE/$script" "$SSH_PORT" "$arg" "$T/proxy.ready" &
  AFTER_PIDS+=($!)
  wait_for 5 test -s "$T/proxy.ready" || fail "$script did not start"
  PX=$(cat "$T/proxy.ready")
  printf '[w-0]:%s %s\n' "$PX" "$hostkey" >> "$T/ssh/known_hosts"
}

# Runs `k8s-agent w-0 true` through the proxy start_proxy started (3 s
# timeout); sets RC, output in $T/out and $T/err.
run_via_proxy() {
  # The first -p wins, as in ssh: SSH_ARGS's own port is sshd's.
  "$AGENT" -p "$PX" "${SSH_ARGS[@]}" --timeout 3s w-0 true > "$T/out" 2> "$T/err"
  RC=$?
}

case "$SCENARIO" in
probe-silent-listener)
  # A listener at the pod IP that accepts and never speaks: the first probe
  # hangs in the handshake. A new IP, or Failed, must be acted on while it
  # hangs, not after ConnectTimeout (60 s here; the bound below is 20 s).
  start_sshd
  /usr/bin/python3 "$HERE/silent_listener.py" 127.0.0.2 "$SSH_PORT" "$T/accepted" &
  AFTER_PIDS+=($!)
  wait_for 5 bash -c "(exec 3<>/dev/tcp/127.0.0.2/$SSH_PORT) 2>/dev/null" || fail "silent listener did not start"
  wait_for 5 test -s "$T/accepted" || fail "silent listener did not accept"
  : > "$T/accepted"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.2"}'
  run_agent_bg -o ConnectTimeout=60 --timeout 60s w-0 echo moved
  wait_for 10 test -s "$T/accepted" || fail "the agent never reached the silent listener"
  pod w-0 '{"podIP":"127.0.0.1"}'
  wait_agent 20
  [ $RC -eq 0 ] || fail "new IP during a hung probe: rc $RC"
  [ "$(cat "$T/out")" = moved ] || fail "stdout: $(cat "$T/out")"

  : > "$T/accepted"
  pod w-0 '{"podIP":"127.0.0.2"}'
  run_agent_bg -o ConnectTimeout=60 --timeout 60s w-0 true
  wait_for 10 test -s "$T/accepted" || fail "the agent never reached the silent listener (2)"
  pod w-0 '{"phase":"Failed","reason":"Evicted","message":"gone"}'
  wait_agent 20
  [ $RC -eq 255 ] || fail "Failed during a hung probe: rc $RC"
  grep -q 'pod default/w-0 is Failed: Evicted: gone' "$T/err" || fail "message: $(cat "$T/err")"
  ok "new IP and Failed seen while the first probe hung"
  ;;
api-down)
  # The API server dies while the agent watches a Pending pod: the progress
  # line and the final message must blame the API server, not the pod.
  pod w-0 '{"phase":"Pending","waitingReason":"ContainerCreating"}'
  run_agent_bg --timeout 8s w-0 true
  wait_watching 1
  fake_apiserver_stop "$T/api"
  wait_agent 30
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'w-0: waiting for pod default/w-0: no usable answer from the API server for' "$T/err" ||
    fail "progress line does not name the API server: $(cat "$T/err")"
  grep -q 'timed out after 8.0s waiting for pod default/w-0: no usable answer from the API server for .*failed request.*last error: .*; last known: Pending: ContainerCreating' "$T/err" ||
    fail "final message: $(cat "$T/err")"
  grep -q 'check that the API server https://127.0.0.1:[0-9]* is up and reachable' "$T/err" || fail "remedy: $(cat "$T/err")"
  # Down from the start: never "does not exist" nor a pod state.
  K8S_AGENT_SERVER=https://127.0.0.1:1 run_agent --timeout 3s w-0 true
  [ $RC -eq 255 ] || fail "down from the start: rc $RC"
  grep -q 'no usable answer from the API server for .*the pod was not read yet' "$T/err" || fail "down from the start: $(cat "$T/err")"
  grep -q 'does not exist' "$T/err" && fail "blamed the pod: $(cat "$T/err")"
  ok "$(tail -1 "$T/err")"
  ;;
token-injection)
  # A token file holding a second header line is refused before any
  # request, and the token is not printed.
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  printf 'tok3n\r\nX-Injected: yes\n' > "$T/evil-token"
  api POST /_control/stats/reset
  K8S_AGENT_TOKEN_FILE="$T/evil-token" run_agent -vv w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q "token file $T/evil-token holds a control character (0x0d) at byte 5" "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 'X-Injected\|tok3n' "$T/err" && fail "token bytes printed: $(cat "$T/err")"
  [ "$(requests)" = 0 ] || fail "$(requests) request(s) reached the API server"
  # One trailing newline (echo > file) is fine, as with kubectl.
  printf '%s\n' "$(cat "$T/api/token")" > "$T/nl-token"
  start_sshd
  K8S_AGENT_TOKEN_FILE="$T/nl-token" run_agent w-0 echo ok
  { [ $RC -eq 0 ] && [ "$(cat "$T/out")" = ok ]; } || fail "trailing newline: rc $RC $(cat "$T/err")"
  ok "refused before any request; a trailing newline still works"
  ;;
kubeconfig-missing-context)
  cat > "$T/kubeconfig" <<KC
apiVersion: v1
kind: Config
current-context: gone
contexts:
- name: dev
  context: {cluster: c1, user: u1}
clusters:
- name: c1
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u1
  user: {token: x}
KC
  env -u K8S_AGENT_SERVER -u K8S_AGENT_TOKEN_FILE -u K8S_AGENT_CERTIFICATE_AUTHORITY \
    "$AGENT" "${SSH_ARGS[@]}" --kubeconfig "$T/kubeconfig" w-0 true > "$T/out" 2> "$T/err"
  RC=$?
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q "kubeconfig $T/kubeconfig: current-context \"gone\" does not exist (contexts in the file: \"dev\"" "$T/err" ||
    fail "message: $(cat "$T/err")"
  grep -q 'no Kubernetes API server configured' "$T/err" && fail "old message: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
no-passwd-entry)
  # A uid with no passwd entry logs in as "default" (what k8s-agent-sshd
  # names such a uid), never as $USER (it once logged in as USER=root).
  # This host's sshd has no "default" user, so the login is refused: what
  # matters is the name the agent offered.
  uid=
  for u in 4242 54321 60123; do getent passwd "$u" > /dev/null || { uid=$u; break; }; done
  [ -n "$uid" ] || skip "no free uid"
  command -v setpriv > /dev/null || skip "no setpriv"
  # The uid's own copies of what it reads: $T is root's, mode 700.
  own=$(mktemp -d /tmp/k8s-agent-nopw.XXXXXX)
  HOSTILE_DIRS+=("$own")
  cp "$T/api/ca.crt" "$T/api/token" "$T/ssh/id_ed25519" "$T/ssh/known_hosts" "$own/"
  chown -R "$uid:$uid" "$own"
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  setpriv --reuid="$uid" --regid="$uid" --clear-groups env -i PATH=/usr/bin:/bin HOME=/ USER=root \
    K8S_AGENT_SERVER="$K8S_AGENT_SERVER" K8S_AGENT_NAMESPACE=default \
    K8S_AGENT_CERTIFICATE_AUTHORITY="$own/ca.crt" K8S_AGENT_TOKEN_FILE="$own/token" \
    "$AGENT" -v -p "$SSH_PORT" -i "$own/id_ed25519" -o "UserKnownHostsFile=$own/known_hosts" \
    -o StrictHostKeyChecking=yes --timeout 10s w-0 true > "$T/out" 2> "$T/err"
  RC=$?
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'No user exists' "$T/err" && fail "old refusal: $(cat "$T/err")"
  grep -q 'default@127.0.0.1' "$T/err" || fail "not as default: $(cat "$T/err")"
  grep -q 'root@' "$T/err" && fail "tried root: $(cat "$T/err")"
  ok "$(tail -n 1 "$T/err")"
  ;;
auth-reset)
  # The connection is reset while the agent waits for the answer to its
  # public key (sshd's AuthorizedKeysCommand holds the answer; a proxy then
  # sends RST): "Connection reset by ...", as ssh says, never "rejected".
  akc_dir=$(mktemp -d -p /run k8s-agent-akc.XXXXXX)
  HOSTILE_DIRS+=("$akc_dir")
  chmod 755 "$akc_dir"  # sshd insists on a root-owned, unwritable path.
  cat > "$akc_dir/akc" <<AKC
#!/bin/sh
touch $T/auth-started
while [ -e $T/auth-started ]; do sleep 0.05; done
cat $T/ssh/authorized_keys
AKC
  chmod 755 "$akc_dir/akc"
  # Only the command may answer (first value wins in sshd_config).
  sed -i "s|^AuthorizedKeysFile .*|AuthorizedKeysFile none|" "$T/ssh/sshd_config"
  printf 'AuthorizedKeysCommand %s\nAuthorizedKeysCommandUser root\n' "$akc_dir/akc" >> "$T/ssh/sshd_config"
  start_sshd
  start_proxy reset_proxy.py "$T/auth-started"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  run_via_proxy
  [ $RC -eq 255 ] || fail "rc $RC; sshd: $(cat "$SSHD_LOG")"
  grep -q "Connection reset by 127.0.0.1 port $PX during authentication" "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 'rejected\|authorized_keys' "$T/err" && fail "reported as a rejected key: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
sshd-closes-after-kex)
  # The connection is closed (FIN) right after the key exchange, before
  # authentication: the connection's sshd died (OOM, the container
  # restarting) or a proxy cut it. (sshd's MaxStartups closes at accept,
  # before its banner.) Transient, so retried within --timeout; the message
  # names the stage, the host and where to look.
  start_sshd
  start_proxy kex_close_proxy.py "$T/kex-closed"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  run_via_proxy
  [ $RC -eq 255 ] || fail "rc $RC"
  n=0
  [ -f "$T/kex-closed" ] && n=$(wc -l < "$T/kex-closed")
  [ "$n" -ge 2 ] || fail "not retried: $n connection(s) closed after the key exchange"
  grep -q 'w-0' "$T/err" || fail "host not named: $(cat "$T/err")"
  grep -q "127.0.0.1 port $PX" "$T/err" || fail "address not named: $(cat "$T/err")"
  grep -q 'after the key exchange' "$T/err" || fail "stage not named: $(cat "$T/err")"
  grep -q "sshd's log on the pod" "$T/err" || fail "no remedy: $(cat "$T/err")"
  grep -q 'rejected\|authorized_keys' "$T/err" && fail "reported as a rejected key: $(cat "$T/err")"
  ok "$n closed connections: $(cat "$T/err")"
  ;;
bad-user-keys)
  # A key the agent cannot use fails at once (exit 255, no retry until
  # --timeout), naming the file and why: corrupt, passphrase-protected,
  # and a type this build has no support for (DSA).
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5\n-----END OPENSSH PRIVATE KEY-----\n' > "$T/ssh/corrupt"
  chmod 600 "$T/ssh/corrupt"
  ssh-keygen -q -t ed25519 -N secret -f "$T/ssh/locked"
  ssh-keygen -q -t dsa -N '' -f "$T/ssh/dsa"
  for case in "corrupt:corrupt: an OpenSSH private key file" "locked:passphrase-protected" "dsa:DSA keys are not supported"; do
    key=${case%%:*} why=${case#*:}
    # A retried key would end in "timed out" after 10 s, inside the test's limit.
    "$AGENT" -p "$SSH_PORT" -i "$T/ssh/$key" -o "UserKnownHostsFile=$T/ssh/known_hosts" -l root \
      --timeout 10s w-0 true > "$T/out" 2> "$T/err" < /dev/null
    RC=$?
    [ $RC -eq 255 ] || fail "$key: rc $RC"
    grep -q "$T/ssh/$key (unusable" "$T/err" || fail "$key: file not named: $(cat "$T/err")"
    grep -q "$why" "$T/err" || fail "$key: reason not given: $(cat "$T/err")"
    grep -q 'timed out' "$T/err" && fail "$key: retried until the timeout: $(cat "$T/err")"
    grep -q 'Pass a usable key with -i FILE' "$T/err" || fail "$key: no remedy: $(cat "$T/err")"
    echo "  $key: $(cat "$T/err")"
  done
  ok "corrupt, passphrase-protected and DSA keys refused at once"
  ;;
weak-algorithms)
  # An sshd that only speaks what OpenSSH 9's client refuses by default:
  # refused like ssh does, accepted when -o asks for it.
  cp "$T/ssh/sshd_config" "$T/ssh/sshd_config.base"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  for case in "Ciphers aes128-cbc" "KexAlgorithms diffie-hellman-group14-sha1" "MACs hmac-md5"; do
    key=${case%% *} value=${case#* }
    { cat "$T/ssh/sshd_config.base"; echo "$case"; } > "$T/ssh/sshd_config"
    start_sshd
    run_agent --timeout 2s w-0 true
    [ $RC -eq 255 ] || fail "$case: the agent offered $value by default (rc $RC)"
    run_agent -o "$key=$value" w-0 echo "$value"
    { [ $RC -eq 0 ] && [ "$(cat "$T/out")" = "$value" ]; } || fail "-o $key=$value: rc $RC $(cat "$T/err")"
    stop_sshd
  done
  ok "aes128-cbc, diffie-hellman-group14-sha1 and hmac-md5 only on request"
  ;;
long-command)
  # ssh runs a 120 KB command; libssh2 cannot send an exec request over
  # ~34.7 KB, so the agent sends such a command on stdin (see
  # plugin/ssh/long_command.h). Around the limit, and far above it, with
  # stdin after it.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  for n in 34725 34726 120000; do
    pad=$(head -c $((n - 12)) /dev/zero | tr '\0' p)
    cmd=": $pad; echo ran"
    [ ${#cmd} -eq "$n" ] || fail "built ${#cmd} bytes, not $n"
    run_agent w-0 "$cmd"
    { [ $RC -eq 0 ] && [ "$(cat "$T/out")" = ran ]; } || fail "$n-byte command: rc $RC $(head -c 500 "$T/err")"
  done
  pad=$(head -c 100000 /dev/zero | tr '\0' q)
  printf 'from stdin\n' | "$AGENT" "${SSH_ARGS[@]}" w-0 ": $pad; cat; exit 3" > "$T/out" 2> "$T/err"
  RC=$?
  [ $RC -eq 3 ] || fail "stdin after a long command: rc $RC $(head -c 500 "$T/err")"
  [ "$(cat "$T/out")" = "from stdin" ] || fail "stdin after a long command: $(cat "$T/out")"
  ok "34725, 34726 and 120000-byte commands ran; stdin and status intact"
  ;;
big-banner)
  # An sshd Banner over libssh2's 40000-byte packet limit: the agent cannot
  # read the answer to its key (ssh can), and must say that, not "rejected".
  head -c 41000 /dev/zero | tr '\0' b | fold -w 80 > "$T/ssh/banner"
  echo "Banner $T/ssh/banner" >> "$T/ssh/sshd_config"
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  run_agent --timeout 10s w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q "libssh2 could not read the server's answer" "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 'Banner' "$T/err" || fail "Banner not named: $(cat "$T/err")"
  grep -q 'rejected\|authorized_keys' "$T/err" && fail "reported as a rejected key: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
max-auth-tries)
  # sshd's MaxAuthTries ends the connection (SSH_MSG_DISCONNECT) when the
  # first key offered is not authorized: the agent says what the server
  # said and what to change, once (one connection, no retry until
  # --timeout), not "libssh2 could not read ... Banner".
  echo "MaxAuthTries 1" >> "$T/ssh/sshd_config"
  ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/other"
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  # -i accumulates: the unauthorized key is offered first.
  "$AGENT" -i "$T/ssh/other" "${SSH_ARGS[@]}" --timeout 10s w-0 true > "$T/out" 2> "$T/err"
  RC=$?
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -qF 'server closed the connection during authentication: "Too many authentication failures" (SSH disconnect reason 2)' "$T/err" || fail "message: $(cat "$T/err")"
  grep -q "$T/ssh/other" "$T/err" || fail "key not named: $(cat "$T/err")"
  grep -q 'MaxAuthTries' "$T/err" || fail "no remedy: $(cat "$T/err")"
  grep -q 'Banner\|timed out' "$T/err" && fail "misreported or retried: $(cat "$T/err")"
  n=$(grep -c 'maximum authentication attempts exceeded' "$SSHD_LOG")
  [ "$n" -eq 1 ] || fail "$n connections hit MaxAuthTries: $(cat "$SSHD_LOG")"
  ok "$(cat "$T/err")"
  ;;
pre-ident-flood)
  # 1 MB of text lines and no "SSH-2.0-" line: ssh gives up after 1024
  # lines ("No SSH version received in first 1024 lines"), at once. So
  # does the agent, naming the reason, on the first connection; it used to
  # retry until --timeout.
  rm -f "$T/proxy.ready"
  /usr/bin/python3 "$HERE/prelude_server.py" 1048576 "$T/prelude.count" "$T/proxy.ready" &
  AFTER_PIDS+=($!)
  wait_for 5 test -s "$T/proxy.ready" || fail "prelude_server.py did not start"
  PX=$(cat "$T/proxy.ready")
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start=$(date +%s%N)
  "$AGENT" -p "$PX" "${SSH_ARGS[@]}" --timeout 20s w-0 true > "$T/out" 2> "$T/err"
  RC=$?
  ms=$(ms_since "$start")
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q "w-0: .*127.0.0.1:$PX.*no SSH version received in the first 1024 lines from the server" "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 'Port at the sshd' "$T/err" || fail "no remedy: $(cat "$T/err")"
  grep -q 'timed out' "$T/err" && fail "retried until --timeout: $(cat "$T/err")"
  n=$(wc -l < "$T/prelude.count")
  [ "$n" -eq 1 ] || fail "$n connections: retried"
  [ "$ms" -lt 10000 ] || fail "took ${ms} ms"
  ok "${ms} ms, $n connection: $(cat "$T/err")"
  ;;
sigterm-max-sessions-one)
  # As root, sshd ignores the signal request and the fallback needs a
  # second session, which MaxSessions 1 refuses: -v says the signal was not
  # delivered, and the agent drops the session at once (it waited out a
  # 2 s grace): sshd then closes the command's pipes, so a command that
  # writes (orted does) dies of SIGPIPE. One that neither writes nor reads
  # keeps running, as it does after OpenSSH's ssh (no pty: no SIGHUP).
  echo "MaxSessions 1" >> "$T/ssh/sshd_config"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  run_agent_bg -v w-0 'echo $$ > '"$T"'/remote.pid; while :; do echo tick; sleep 0.2; done'
  wait_for 10 remote_started || fail "remote command never started"
  wait_for 10 grep -q tick "$T/out" || fail "no output"
  t0=$(date +%s%N)
  kill -TERM "$AGENT_PID"
  wait_agent 15
  ms=$(ms_since "$t0")
  [ $RC -eq 143 ] || fail "rc $RC, want 143"
  grep -q 'SIGTERM could not be delivered to the remote command: the server refused a second session channel.*dropping the session' "$T/err" || fail "no message: $(cat "$T/err")"
  [ "$ms" -lt 1500 ] || fail "took $ms ms after SIGTERM: the grace was waited out"
  wait_for 5 remote_gone || fail "the writing remote command still runs"
  # The quiet command: left running by ssh and by the agent alike.
  rm -f "$T/remote.pid"
  "${OPENSSH[@]}" "$REMOTE_SLEEP" > /dev/null 2>&1 &
  ssh_pid=$!
  wait_for 10 remote_started || fail "ssh: remote command never started"
  kill -TERM "$ssh_pid"; wait "$ssh_pid"
  ssh_left=running; wait_for 2 remote_gone && ssh_left=gone
  kill -9 "$(cat "$T/remote.pid")" 2>/dev/null
  rm -f "$T/remote.pid"
  run_agent_bg w-0 "$REMOTE_SLEEP"
  wait_for 10 remote_started || fail "remote sleep never started"
  kill -TERM "$AGENT_PID"
  wait_agent 15
  [ $RC -eq 143 ] || fail "sleep: rc $RC, want 143"
  agent_left=running; wait_for 2 remote_gone && agent_left=gone
  [ "$agent_left" = "$ssh_left" ] || fail "quiet command: $agent_left after the agent, $ssh_left after ssh"
  ok "dropped ${ms} ms after SIGTERM, the writing command ended; a quiet one: $agent_left, as after ssh"
  ;;
*)
  fail "unknown scenario"
  ;;
esac
