#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The k8s-agent binary against the fake API server (real TLS) and a real
# sshd on loopback. Each scenario is one ctest test:
#   agent_test.sh AGENT_BINARY SCENARIO
set -uo pipefail

AGENT=$1
SCENARIO=$2
# sshd runs in a mount namespace of its own (unshare --mount, below) and as
# root, so as another user every scenario would fail with "unshare failed":
# skipped instead (ctest's SKIP_RETURN_CODE 77), with the reason.
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: the agent integration tests need root (unshare --mount, sshd)"
  exit 77
fi
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../fake_apiserver/fake_apiserver_lib.sh"

T=$(mktemp -d /tmp/k8s-agent-it.XXXXXX)
AFTER_PIDS=()
STOPPED_PIDS=()
AGENT_PID=
cleanup() {
  for p in "${AFTER_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  [ -n "${AGENT_PID:-}" ] && { kill -9 "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null; }
  # Processes a scenario stopped or left behind on purpose, by pid.
  for p in ${STOPPED_PIDS[@]+"${STOPPED_PIDS[@]}"}; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
  [ -s "$T/remote.pid" ] && kill -9 "$(cat "$T/remote.pid")" 2>/dev/null
  # sshd, its sessions and the port's holder, by pid.
  sshd_harness_release "$T/ssh"
  fake_apiserver_stop "$T/api"
  rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL [$SCENARIO]: $*" >&2; for f in "$T"/out "$T"/err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; } >&2; done; exit 1; }
ok() { echo "ok [$SCENARIO]: $*"; }

# ---- sshd on 127.0.0.1, own keys, user key authorised --------------------
# The tests' one sshd harness (the C++ SshdFixture's too): $T/ssh holds the
# keys (host_ed25519, id_ed25519), authorized_keys, sshd_config, sshd.log
# and sshd.pid, and the port stays reserved for this test until cleanup.
# shellcheck source=tests/lib/sshd_harness.sh
source "$HERE/../../lib/sshd_harness.sh"
free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
sshd_harness_init "$T/ssh" || fail "sshd harness: init"
SSH_PORT=$(cat "$T/ssh/port")
SSHD_LOG=$T/ssh/sshd.log
# known_hosts: the key under the host names Open MPI would pass, in ssh's
# [name]:port form for a port other than 22, as k8s-agent checks it.
hostkey=$(cut -d' ' -f1,2 "$T/ssh/host_ed25519.pub")
names=""
for h in w-0 w-1 w-2 w-10 w-late job-0.job.default.svc.cluster.local; do names+="[$h]:$SSH_PORT,"; done
printf '%s %s\n' "${names%,}" "$hostkey" > "$T/ssh/known_hosts"

# (Re)starts sshd with $T/ssh/sshd_config as it is now, on SSH_PORT; returns
# once it listens there.
start_sshd() { sshd_harness_start "$T/ssh" || fail "sshd did not start (the harness said why, above)"; }
# Kills sshd and every process under it; returns once it has gone.
stop_sshd() { sshd_harness_stop "$T/ssh" || fail "sshd did not stop"; }
sshd_pid() { cat "$T/ssh/sshd.pid"; }

# ---- fake API server ------------------------------------------------------
fake_apiserver_certs "$T/api" || fail "certs"
printf '[]' > "$T/pods.json"
fake_apiserver_start "$T/api" --pods "$T/pods.json" || fail "apiserver"
api() { fake_apiserver_control "$T/api" "$@" >/dev/null || fail "control $*"; }
pod() { api PUT "/_control/pods/default/$1" "$2"; }
requests() { fake_apiserver_control "$T/api" GET /_control/stats | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])'; }

export K8S_AGENT_SERVER="https://127.0.0.1:$FAKE_APISERVER_PORT"
export K8S_AGENT_CERTIFICATE_AUTHORITY="$T/api/ca.crt"
export K8S_AGENT_TOKEN_FILE="$T/api/token"
export K8S_AGENT_NAMESPACE=default
export K8S_AGENT_TRACE="$T/trace.jsonl"
unset KUBERNETES_SERVICE_HOST KUBECONFIG
SSH_ARGS=(-p "$SSH_PORT" -i "$T/ssh/id_ed25519" -o "UserKnownHostsFile=$T/ssh/known_hosts" -o StrictHostKeyChecking=yes -l root)

run_agent() {  # run_agent ARGS... ; sets RC
  "$AGENT" "${SSH_ARGS[@]}" "$@" > "$T/out" 2> "$T/err"
  RC=$?
}
run_agent_bg() {  # run_agent_bg ARGS... ; sets AGENT_PID
  "$AGENT" "${SSH_ARGS[@]}" "$@" > "$T/out" 2> "$T/err" &
  AGENT_PID=$!
}
wait_agent() {  # wait_agent SECONDS: sets RC (124 and kills it on timeout)
  for _ in $(seq 1 $(( $1 * 20 ))); do
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$AGENT_PID" 2>/dev/null; then
    kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null; AGENT_PID=; RC=124
    return
  fi
  wait "$AGENT_PID"; RC=$?; AGENT_PID=
}
wait_for() {  # wait_for SECONDS CMD...: poll CMD every 50 ms
  for _ in $(seq 1 $(( $1 * 20 ))); do "${@:2}" && return 0; sleep 0.05; done
  return 1
}
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# The remote command of the mid-command scenarios records its pid so that
# the test can check it ended, and clean it up by pid if it did not.
REMOTE_SLEEP='echo $$ > '"$T"'/remote.pid; exec sleep 30'
remote_started() { [ -s "$T/remote.pid" ]; }
remote_gone() { [ -s "$T/remote.pid" ] && ! kill -0 "$(cat "$T/remote.pid")" 2>/dev/null; }
REMOTE_YES='echo $$ > '"$T"'/remote.pid; exec yes'
# OpenSSH's client on the same sshd, to compare with.
OPENSSH=(/usr/bin/ssh -p "$SSH_PORT" -i "$T/ssh/id_ed25519" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR root@127.0.0.1)
pipe_full() {  # pipe_full FIFO: the pipe holds as many bytes as it can
  /usr/bin/python3 -c 'import fcntl, os, struct, sys, termios
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
queued = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
sys.exit(0 if queued >= fcntl.fcntl(fd, 1032) else 1)  # F_GETPIPE_SZ' "$1"
}
remote_alive() { kill -0 "$(cat "$T/remote.pid")" 2>/dev/null; }
# Per-connection sshd processes: children of the listener (by pid).
sshd_sessions() { pgrep -P "$(sshd_pid)"; }
wait_watching() {  # wait_watching N: until N WATCH requests were counted
  wait_for 10 watches_at_least "$1" || fail "never saw $1 watch(es)"
}
watches_at_least() {
  local n
  n=$(fake_apiserver_control "$T/api" GET /_control/stats | /usr/bin/python3 -c 'import json,sys; print(sum(v for k,v in json.load(sys.stdin)["requests"].items() if k.startswith("WATCH")))') || return 1
  [ "$n" -ge "$1" ]
}
stat() {  # stat KEY: a top-level number of /_control/stats (quorum_lists, ...)
  fake_apiserver_control "$T/api" GET /_control/stats | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}
count_of() {  # count_of VERB: requests with that verb since the last reset
  fake_apiserver_control "$T/api" GET /_control/stats | /usr/bin/python3 -c 'import json,sys; print(sum(v for k,v in json.load(sys.stdin)["requests"].items() if k.startswith(sys.argv[1] + " ")))' "$1"
}
trace_has() { grep -q "\"event\":\"$1\"" "$T/trace.jsonl" || fail "no $1 in trace"; }
after() {  # after SECONDS CMD...: run a control step later, in the background
  local s=$1; shift
  ( sleep "$s"; "$@" ) &
  AFTER_PIDS+=($!)
}

# hostile_test.sh sources this file for the setup above and runs its own
# scenarios.
[ "${AGENT_TEST_LIB:-0}" = 1 ] && return 0

case "$SCENARIO" in
ready)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/stats/reset
  start_sshd
  run_agent w-0 echo hello '"$((6*7))"' "'a;b'"
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = "hello 42 a;b" ] || fail "stdout: $(cat "$T/out")"
  [ "$(requests)" = 1 ] || fail "expected 1 API request for a ready pod, got $(requests)"
  [ "$(stat quorum_lists)" = 0 ] || fail "the lookup was a quorum read"
  for e in resolved pod_running ssh_ready started exited; do trace_has $e; done
  ok "one cached LIST, command ran through the remote shell"
  ;;
exit-status)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  run_agent w-0 'echo out; echo err >&2; exit 42'
  [ $RC -eq 42 ] || fail "rc $RC, want 42"
  [ "$(cat "$T/out")" = out ] || fail "stdout"
  grep -q '^err$' "$T/err" || fail "stderr"
  run_agent w-0 'kill -TERM $$'
  [ $RC -eq 143 ] || fail "signal death rc $RC, want 143"
  grep -q 'killed by signal TERM' "$T/err" || fail "signal message"
  ok "status 42, streams apart, signal death 143"
  ;;
created-late)
  # The pod is created once the agent watches for it (GET 404, LIST,
  # WATCH), whenever that is on a loaded machine.
  start_sshd
  api POST /_control/stats/reset
  run_agent_bg w-late hostname
  wait_watching 1
  pod w-late '{"phase":"Running","podIP":"127.0.0.1"}'
  wait_agent 30
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(requests)" = 3 ] || fail "expected LIST+LIST+WATCH = 3 requests, got $(requests)"
  [ "$(stat quorum_lists)" = 0 ] || fail "$(stat quorum_lists) quorum LIST(s)"
  ok "waited for creation with 3 API calls"
  ;;
pending-then-running)
  start_sshd
  pod w-0 '{"phase":"Pending","waitingReason":"ContainerCreating"}'
  api POST /_control/stats/reset
  run_agent_bg w-0 true
  wait_watching 1
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1","waitingReason":null}'
  wait_agent 30
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(requests)" = 2 ] || fail "expected LIST+WATCH = 2 requests, got $(requests)"
  ok "cached LIST then one watch"
  ;;
running-before-sshd)
  # sshd starts once the agent has been refused: after its first failed
  # attempt it watches the pod, which the fake server counts.
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/stats/reset
  t0=$(date +%s%N)
  run_agent_bg w-0 echo up
  wait_watching 1
  start_sshd
  wait_agent 30
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = up ] || fail "stdout"
  attempts=$(grep '"ssh_ready"' "$T/trace.jsonl" | sed 's/.*after \([0-9]*\) attempt.*/\1/')
  [ "${attempts:-0}" -gt 1 ] || fail "expected retries before sshd listened, got '$attempts'"
  ok "ssh refused $attempts times, then ready; $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  ;;
failed-mid-wait)
  # Fails on the watch event itself: the message is the pod's, not the
  # --timeout's (10m by default; the wait below is only a hang bound).
  pod w-0 '{"phase":"Pending"}'
  run_agent_bg w-0 true
  wait_watching 1
  t0=$(date +%s%N)
  pod w-0 '{"phase":"Failed","reason":"Evicted","message":"The node was low on resource: memory."}'
  wait_agent 30
  ms=$(ms_since $t0)
  [ $RC -eq 255 ] || fail "rc $RC, want 255"
  grep -q 'k8s-agent: w-0: pod default/w-0 is Failed: Evicted: The node was low on resource: memory.' "$T/err" || fail "message"
  grep -q 'timed out' "$T/err" && fail "waited for the timeout: $(cat "$T/err")"
  ok "failed on the event, $ms ms after it: $(cat "$T/err")"
  ;;
image-pull)
  pod w-0 '{"phase":"Pending","waitingReason":"ImagePullBackOff","waitingMessage":"Back-off pulling image \"nope:1\""}'
  run_agent w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'ImagePullBackOff: Back-off pulling image "nope:1" (check the image name' "$T/err" || fail "message"
  ok "$(cat "$T/err")"
  ;;
timeout)
  pod w-0 '{"phase":"Pending","waitingReason":"ContainerCreating"}'
  run_agent --timeout 1s w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'timed out after 1.0s waiting for pod default/w-0: Pending: ContainerCreating for' "$T/err" || fail "message"
  ok "$(cat "$T/err")"
  ;;
bad-hosts)
  api POST /_control/stats/reset
  for h in 'w/0' 'w?x' 'w#0' 'w%2e' '..' 'a b' $'w\n0' "$(printf 'x%.0s' $(seq 1 300))"; do
    run_agent "$h" true
    [ $RC -eq 255 ] || fail "host '$h': rc $RC"
    grep -q 'invalid host name\|empty host name' "$T/err" || fail "host '$h': $(cat "$T/err")"
  done
  [ "$(requests)" = 0 ] || fail "a bad host reached the API server"
  ok "rejected before any request"
  ;;
wrong-ca)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  K8S_AGENT_CERTIFICATE_AUTHORITY="$T/api/other-ca.crt" run_agent w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -qi 'certificate' "$T/err" || fail "message: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
wrong-token)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  printf 'not-the-token' > "$T/bad-token"
  K8S_AGENT_TOKEN_FILE="$T/bad-token" run_agent w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -qi 'unauthorized\|401\|token' "$T/err" || fail "message: $(cat "$T/err")"
  grep -q "$(cat "$T/api/token")" "$T/err" "$T/trace.jsonl" && fail "token leaked"
  ok "$(cat "$T/err")"
  ;;
host-key-mismatch)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/other"
  printf '[w-0]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$T/ssh/other.pub")" > "$T/ssh/known_hosts"
  run_agent w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'SHA256:' "$T/err" || fail "fingerprint missing: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
rsa-keys-only)
  # What issue 12 saw fail: an RSA user key and an sshd offering only RSA
  # host keys (rsa-sha2; OpenSSH >= 8.8 refuses SHA-1 ssh-rsa).
  ssh-keygen -q -t rsa -b 3072 -N '' -f "$T/ssh/host_rsa"
  ssh-keygen -q -t rsa -b 3072 -N '' -f "$T/ssh/id_rsa"
  cp "$T/ssh/id_rsa.pub" "$T/ssh/authorized_keys"
  printf 'HostKeyAlgorithms rsa-sha2-512,rsa-sha2-256\nHostKey %s\n' "$T/ssh/host_rsa" > "$T/ssh/cfg_head"
  sed "/^HostKey /d" "$T/ssh/sshd_config" >> "$T/ssh/cfg_head" && mv "$T/ssh/cfg_head" "$T/ssh/sshd_config"
  printf '[w-0]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$T/ssh/host_rsa.pub")" > "$T/ssh/known_hosts"
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  SSH_ARGS=(-p "$SSH_PORT" -i "$T/ssh/id_rsa" -o "UserKnownHostsFile=$T/ssh/known_hosts" -o StrictHostKeyChecking=yes -l root)
  run_agent w-0 echo rsa-ok
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = rsa-ok ] || fail "stdout"
  ok "RSA user key and RSA-only host keys"
  ;;
kex-mismatch)
  # Nothing in common is permanent: one connection, exit 255 naming both
  # sides, not retries until --timeout.
  printf 'KexAlgorithms sntrup761x25519-sha512@openssh.com\n' | cat - "$T/ssh/sshd_config" > "$T/ssh/cfg_head"
  mv "$T/ssh/cfg_head" "$T/ssh/sshd_config"
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  run_agent --timeout 120 w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'no common key exchange algorithm' "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 'offers sntrup761x25519-sha512@openssh.com' "$T/err" || fail "server side missing: $(cat "$T/err")"
  grep -q 'curve25519-sha256' "$T/err" || fail "our side missing: $(cat "$T/err")"
  # sshd logs each refused negotiation (start_sshd's probe has none).
  n=$(grep -c 'Unable to negotiate' "$SSHD_LOG")
  [ "$n" -eq 1 ] || fail "$n negotiations with sshd (retried?)"
  ok "$(cat "$T/err")"
  ;;
hostname)
  start_sshd
  pod job-0-x7k2p '{"phase":"Running","podIP":"127.0.0.1","hostname":"job-0","subdomain":"job"}'
  run_agent job-0.job.default.svc.cluster.local echo via-hostname
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = via-hostname ] || fail "stdout"
  ok "spec.hostname resolved to job-0-x7k2p"
  ;;
wait-only)
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  pod w-1 '{"phase":"Pending"}'
  after 1 pod w-1 '{"phase":"Running","podIP":"127.0.0.1"}'
  run_agent --wait-only w-0 w-1
  [ $RC -eq 0 ] || fail "rc $RC"
  [ ! -s "$T/out" ] || fail "wait-only printed to stdout"
  ok "both hosts ready"
  ;;
wait-only-failed)
  # Each failed host on its own line; the summary under the mode, not
  # under the first host (which was ready).
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  pod w-1 '{"phase":"Failed","reason":"Evicted","message":"low memory"}'
  run_agent --wait-only w-0 w-1
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q '^k8s-agent: w-1: pod default/w-1 is Failed: Evicted' "$T/err" || fail "no line for w-1: $(cat "$T/err")"
  grep -q '^k8s-agent: --wait-only: 1 of 2 host(s) did not become ready$' "$T/err" || fail "summary: $(cat "$T/err")"
  grep -q '^k8s-agent: w-0: .*did not become ready' "$T/err" && fail "summary under w-0: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
failed-message-escaped)
  # A pod's status.message is the API's text, not ours: a newline in it must
  # not forge another host's line, nor an ESC or a C1 CSI (U+009B) reach the
  # terminal. Each is shown as \xNN; the trace stays one JSON object a line.
  pod w-0 '{"phase":"Failed","reason":"Evicted","message":"gone\nk8s-agent: w-1: forged\u001b[31mred\u009b2J"}'
  run_agent w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  [ "$(grep -c '^k8s-agent: ' "$T/err")" -eq 1 ] || fail "not one line: $(cat -A "$T/err")"
  grep -q '^k8s-agent: w-1' "$T/err" && fail "forged a line for w-1: $(cat -A "$T/err")"
  LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]\|\xc2\x9b' "$T/err" && fail "control character on stderr: $(cat -A "$T/err")"
  grep -qF 'is Failed: Evicted: gone\x0ak8s-agent: w-1: forged\x1b[31mred\xc2\x9b2J' "$T/err" || fail "message: $(cat -A "$T/err")"
  /usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    json.loads(line)' "$T/trace.jsonl" || fail "trace: $(cat -A "$T/trace.jsonl")"
  LC_ALL=C grep -q $'\x1b' "$T/trace.jsonl" && fail "raw ESC in the trace: $(cat -A "$T/trace.jsonl")"
  ok "$(cat "$T/err")"
  ;;
hostfile)
  W='"labels":{"role":"worker"}'
  pod w-10 "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$W}"
  pod w-2 "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$W}"
  pod w-1 "{\"phase\":\"Pending\",$W}"
  pod w-3 "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",\"deleting\":true,$W}"
  pod launcher '{"phase":"Running","podIP":"127.0.0.1","labels":{"role":"launcher"}}'
  api POST /_control/stats/reset
  run_agent --hostfile --selector role=worker --slots 2
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = "$(printf 'w-2 slots=2\nw-10 slots=2')" ] || fail "stdout: $(cat "$T/out")"
  [ "$(requests)" = 1 ] || fail "expected one LIST, got $(requests) requests"
  run_agent --hostfile --selector role=worker
  [ "$(cat "$T/out")" = "$(printf 'w-2\nw-10')" ] || fail "no --slots: $(cat "$T/out")"
  run_agent --hostfile --selector role=worker --format horovod --slots 4
  [ $RC -eq 0 ] || fail "horovod rc $RC"
  [ "$(cat "$T/out")" = "$(printf 'w-2:4\nw-10:4')" ] || fail "horovod: $(cat "$T/out")"
  run_agent --hostfile --selector role=nobody
  [ $RC -eq 0 ] && [ ! -s "$T/out" ] || fail "empty selection: rc $RC, $(cat "$T/out")"
  ok "w-2 before w-10; Pending, terminating and unselected pods left out"
  ;;
hostfile-resources)
  W='"labels":{"role":"worker"}'
  pod w-0 "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$W,\"containers\":[{\"name\":\"main\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\"}}},{\"name\":\"side\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}"
  pod w-1 "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$W}"
  run_agent --hostfile --selector role=worker --slots-from-resource nvidia.com/gpu
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = "w-0 slots=5" ] || fail "stdout: $(cat "$T/out")"
  grep -q 'skipping pod w-1: no nvidia.com/gpu' "$T/err" || fail "no note for w-1"
  ok "slots = limits + requests over containers; $(cat "$T/err")"
  ;;
hostfile-ssh-ready)
  W='"labels":{"role":"worker"}'
  pod w-0 "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$W}"
  pod w-1 "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$W}"
  run_agent --hostfile --selector role=worker --ssh-ready
  [ $RC -eq 0 ] || fail "rc $RC without sshd"
  [ ! -s "$T/out" ] || fail "listed pods whose sshd is down: $(cat "$T/out")"
  start_sshd
  run_agent --hostfile --selector role=worker --ssh-ready --format horovod
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = "$(printf 'w-0\nw-1')" ] || fail "stdout: $(cat "$T/out")"
  ok "no sshd: nothing listed; sshd up: both"
  ;;
hostfile-wait)
  W='"labels":{"role":"worker"}'
  start_sshd
  pod w-0 "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$W}"
  pod w-1 "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$W}"
  pod w-late "{\"phase\":\"Pending\",$W}"
  api POST /_control/stats/reset
  run_agent_bg --hostfile --selector role=worker --wait-for-count 3 --ssh-ready --slots 1 --timeout 60s
  wait_watching 1
  pod w-late '{"phase":"Running","podIP":"127.0.0.1"}'
  wait_agent 60
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = "$(printf 'w-0 slots=1\nw-1 slots=1\nw-late slots=1')" ] || fail "stdout: $(cat "$T/out")"
  [ "$(requests)" = 2 ] || fail "expected LIST + one WATCH, got $(requests) requests"
  ok "3 of 3 with one watch"
  ;;
hostfile-timeout)
  W='"labels":{"role":"worker"}'
  pod w-0 "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$W}"
  pod w-1 "{\"phase\":\"Pending\",\"waitingReason\":\"ImagePullBackOff\",$W}"
  run_agent --hostfile --selector role=worker --wait-for-count 3 --timeout 1s
  [ $RC -eq 255 ] || fail "rc $RC"
  [ ! -s "$T/out" ] || fail "printed a partial hostfile"
  grep -q 'timed out after 1.0s waiting for 3 pods matching role=worker in namespace default: 1 of 3 qualify, only 2 pod(s) exist; not ready: w-1: Pending: ImagePullBackOff' "$T/err" || fail "message: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
api-restart)
  # The API server goes away while the agent watches, and a new one comes
  # up on the same address (same CA, token and pods): the agent resumes.
  start_sshd
  printf '[{"name":"w-0","phase":"Pending"}]' > "$T/pods.json"
  pod w-0 '{"phase":"Pending"}'
  api POST /_control/stats/reset
  run_agent_bg --timeout 20s w-0 echo resumed
  wait_watching 1
  fake_apiserver_restart "$T/api" --pods "$T/pods.json" || fail "restart"
  # The restarted server counts from zero: the pod changes once the agent
  # has come back (after refused connections and backoff) and watches it.
  wait_for 20 watches_at_least 1 || fail "the agent never watched the restarted server"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  wait_agent 15
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = resumed ] || fail "stdout: $(cat "$T/out")"
  # The new server's watch history is empty: the resume got 410 and the
  # agent relisted from the cache, not with a quorum read.
  [ "$(stat expired_watches)" -ge 1 ] || fail "the restart did not expire the watch"
  [ "$(stat quorum_lists)" = 0 ] || fail "$(stat quorum_lists) quorum LIST(s) after the restart"
  ok "resumed against the restarted server: $(tr '\n' ' ' < "$T/err")"
  ;;
watch-drops)
  # Every watch is cut as soon as the agent has it, four times, while the
  # pod is Pending; then the pod goes Running and the watch is cut again.
  # Each drop costs a jittered backoff (client-go defaults: 0.8 s
  # doubling); the point is that the agent resumes every time.
  start_sshd
  pod w-0 '{"phase":"Pending","waitingReason":"ContainerCreating"}'
  api POST /_control/stats/reset
  run_agent_bg --timeout 60s w-0 echo through
  t0=$(date +%s%N)
  for n in 1 2 3 4; do
    wait_for 20 watches_at_least $n || fail "no watch $n after $((n - 1)) drop(s)"
    api POST /_control/faults '{"drop_watches":true}'
  done
  wait_for 20 watches_at_least 5 || fail "no watch after 4 drops"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1","waitingReason":null}'
  api POST /_control/faults '{"drop_watches":true}'
  wait_agent 60
  ms=$(ms_since $t0)
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = through ] || fail "stdout"
  w=$(count_of WATCH)
  [ "$w" -ge 5 ] || fail "expected a re-watch after each drop, got $w watches"
  ok "$w watches across 5 drops, done after $ms ms"
  ;;
expired-resume)
  # The watch drops and its resourceVersion has been compacted away: the
  # resume gets 410 Gone, the agent re-reads the pod and watches anew.
  start_sshd
  pod w-0 '{"phase":"Pending"}'
  api POST /_control/stats/reset
  run_agent_bg --timeout 20s w-0 echo relisted
  wait_watching 1
  pod w-1 '{"phase":"Pending"}'  # moves the RV on, so compaction bites
  api POST /_control/faults '{"compact":true}'
  api POST /_control/faults '{"drop_watches":true}'
  wait_watching 2
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  wait_agent 15
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = relisted ] || fail "stdout"
  g=$(( $(count_of GET) + $(count_of LIST) ))
  [ "$g" -ge 2 ] || fail "expected a re-read after 410, got $g GET/LIST"
  ok "$g reads, $(count_of WATCH) watches"
  ;;
retry-after)
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/faults '{"status":429,"count":1,"retry_after":2,"method":"LIST"}'
  t0=$(date +%s%N)
  run_agent -v --timeout 20s w-0 echo later
  ms=$(ms_since $t0)
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = later ] || fail "stdout"
  [ $ms -ge 2000 ] || fail "came back after $ms ms, before Retry-After 2 s"
  # The delay the agent chose is the server's plus jitter of at most one
  # backoff step (Backoff::NextAfter; the first is under 1 s), not a longer
  # backoff.
  delay=$(sed -n 's/.*Retry-After 2.0s.*; retrying in \([0-9.]*\)s$/\1/p' "$T/err")
  [ -n "$delay" ] && awk -v d="$delay" 'BEGIN { exit !(d >= 2.0 && d < 3.0) }' ||
    fail "delay not Retry-After's plus jitter: $(cat "$T/err")"
  ok "waited $ms ms for Retry-After: 2"
  ;;
stdin)
  # stdin is forwarded byte for byte and then closed (EOF), as ssh does: a
  # remote reader that waits for EOF ends, and sees exactly what was sent.
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  head -c 3000000 /dev/urandom > "$T/in"
  want=$(sha256sum < "$T/in" | cut -d' ' -f1)
  run_agent -vv w-0 'sha256sum | cut -d" " -f1; echo eof-seen' < "$T/in"
  [ $RC -eq 0 ] || fail "file: rc $RC"
  [ "$(cat "$T/out")" = "$want"$'\n'eof-seen ] || fail "file: remote saw $(head -c 200 "$T/out")"
  # The 3 MB went through after the agent gave its code pages back (once
  # the command ran): the code it needed was faulted back in.
  grep -q 'advised away [1-9][0-9]* KiB' "$T/err" || fail "no start-up memory released: $(grep -i advised "$T/err")"
  # A pipe whose writer pauses, then writes more and exits: all of it
  # arrives, then EOF. A key first, as PRRTE's prted will read one.
  { printf 'dvm-key-123\n'; sleep 0.3; printf 'tail'; } |
    run_agent w-0 'read key; rest=$(cat); echo "key=$key rest=$rest"'
  [ $RC -eq 0 ] || fail "pipe: rc $RC"
  [ "$(cat "$T/out")" = "key=dvm-key-123 rest=tail" ] || fail "pipe: $(cat "$T/out")"
  # -n: no stdin read at all; the remote side gets EOF at once.
  run_agent -n w-0 'n=$(wc -c); echo "bytes=$n"' < "$T/in"
  [ $RC -eq 0 ] || fail "-n: rc $RC"
  [ "$(tr -d ' ' < "$T/out")" = "bytes=0" ] || fail "-n: $(cat "$T/out")"
  # stdin at /dev/null (what Open MPI gives an agent): EOF at once.
  run_agent w-0 'n=$(wc -c); echo "bytes=$n"' < /dev/null
  [ "$(tr -d ' ' < "$T/out")" = "bytes=0" ] || fail "/dev/null: $(cat "$T/out")"
  ok "3 MB file and a paused pipe forwarded, then EOF; -n and /dev/null give EOF at once"
  ;;
apf-storm)
  # One job's agents share one APF flow. With 2 seats, a queue of 2 and a
  # 50 ms queue wait, 20 agents started together get 429s; each must come
  # back no sooner than Retry-After (1 s) and at its own jittered moment,
  # and all of them must end ready. Counts come from the server.
  fake_apiserver_restart "$T/api" --pods "$T/pods.json" --apf-seats 2 \
    --apf-queue 2 --apf-queue-wait 0.05 --apf-retry-after 1 || fail "restart"
  n=20
  for i in $(seq 0 $((n - 1))); do pod "apf-$i" '{"phase":"Running","podIP":"127.0.0.1"}'; done
  printf '[apf-*]:%s %s\n' "$SSH_PORT" "$hostkey" >> "$T/ssh/known_hosts"
  # Enough unauthenticated connections for every agent at once.
  echo 'MaxStartups 100:30:200' >> "$T/ssh/sshd_config"
  start_sshd
  fake_apiserver_control "$T/api" POST /_control/apf/reset > /dev/null || fail "apf reset"
  # The first two lookups hold both seats for 2 s (a busy server), so every
  # agent whose lookup arrives meanwhile waits 50 ms in the queue and gets a
  # 429, however slowly this machine starts the agents one after another.
  api POST /_control/faults '{"delay_ms":2000,"count":2,"method":"LIST"}'
  pids=()
  for i in $(seq 0 $((n - 1))); do
    "$AGENT" "${SSH_ARGS[@]}" -v --timeout 50s --wait-only "apf-$i" > "$T/out.$i" 2> "$T/err.$i" &
    pids+=($!)
  done
  bad=0
  for i in $(seq 0 $((n - 1))); do wait "${pids[$i]}" || { bad=$((bad + 1)); cat "$T/err.$i" >&2; }; done
  [ $bad -eq 0 ] || fail "$bad of $n agents failed"
  apf=$(fake_apiserver_control "$T/api" GET /_control/apf) || fail "apf stats"
  rejected=$(echo "$apf" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["rejected"])')
  in_flight=$(echo "$apf" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["max_in_flight"])')
  [ "$rejected" -ge 1 ] || fail "no 429 at all: the limit did not bite ($apf)"
  [ "$in_flight" -le 2 ] || fail "more than 2 requests in flight ($apf)"
  # The agents' own account of each retry: "...; retrying in 1.4s" (or
  # "960ms", which would be too soon), in seconds.
  cat "$T"/err.* | sed -n 's/.*Too many requests.*; retrying in \([0-9.]*\)\(m\{0,1\}\)s$/\1 \2/p' |
    awk '{ printf "%.3f\n", ($2 == "m") ? $1 / 1000 : $1 }' > "$T/delays"
  retries=$(wc -l < "$T/delays")
  [ "$retries" -ge 1 ] || fail "no agent logged a 429 retry ($apf)"
  /usr/bin/python3 - "$T/delays" <<'PY' || fail "retry delays: $(sort "$T/delays" | uniq -c | tr '\n' ' ')"
import sys
d = [float(x) for x in open(sys.argv[1])]
assert min(d) >= 1.0, "a retry came sooner than Retry-After: %s" % min(d)
assert len(d) < 2 or len(set(d)) > 1, "every retry waited exactly the same"
PY
  grep -c '"event":"ssh_ready"' "$T/trace.jsonl" | grep -qx "$n" || fail "not $n ssh_ready records"
  ok "$n agents ready; $rejected x 429, $retries retries, delays $(sort -n "$T/delays" | uniq | tr '\n' ' ')"
  ;;
burst-500)
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/faults '{"status":500,"count":3,"method":"LIST"}'
  api POST /_control/stats/reset
  t0=$(date +%s%N)
  run_agent --timeout 20s w-0 echo survived
  ms=$(ms_since $t0)
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = survived ] || fail "stdout"
  [ "$(count_of LIST)" -ge 4 ] || fail "expected 3 failed LISTs and one good, got $(count_of LIST)"
  ok "3 x 500 then success in $ms ms"
  ;;
slow-api)
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/faults '{"delay_ms":1500,"count":1,"method":"LIST"}'
  t0=$(date +%s%N)
  run_agent --timeout 20s w-0 echo patient
  ms=$(ms_since $t0)
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = patient ] || fail "stdout"
  [ $ms -ge 1500 ] || fail "$ms ms: the delay did not apply"
  ok "1.5 s answer accepted, $ms ms in all"
  ;;
token-rotation)
  # The kubelet rewrites the projected token (atomically, by rename); the
  # server then rejects the old one. The agent must pick up the new file.
  start_sshd
  pod w-0 '{"phase":"Pending"}'
  api POST /_control/stats/reset
  old=$(cat "$T/api/token")
  run_agent_bg --timeout 20s w-0 echo rotated
  wait_watching 1
  printf 'fake-token-rotated-%s' "$(openssl rand -hex 8)" > "$T/api/token.new"
  mv "$T/api/token.new" "$T/api/token"
  api POST /_control/faults '{"drop_watches":true}'
  wait_watching 2
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  wait_agent 15
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = rotated ] || fail "stdout"
  grep -q "$old\|$(cat "$T/api/token")" "$T/err" "$T/trace.jsonl" && fail "token leaked"
  ok "new token used after rotation"
  ;;
user-key-unauthorized)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  : > "$T/ssh/authorized_keys"
  start_sshd
  t0=$(date +%s%N)
  run_agent --timeout 10s w-0 true
  ms=$(ms_since $t0)
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'root' "$T/err" || fail "user not named: $(cat "$T/err")"
  grep -q "$T/ssh/id_ed25519" "$T/err" || fail "key not named: $(cat "$T/err")"
  # Not worth retrying: one connection reached sshd, and the message is the
  # refusal, not the --timeout's.
  n=$(grep -c 'Connection closed by authenticating user' "$SSHD_LOG")
  [ "$n" -eq 1 ] || fail "$n connections for an auth refusal: $(cat "$SSHD_LOG")"
  grep -q 'timed out' "$T/err" && fail "retried until the timeout: $(cat "$T/err")"
  ok "$ms ms, one connection: $(cat "$T/err")"
  ;;
sshd-killed)
  # Keepalives off: only the socket's own end (RST/EOF) can end the agent,
  # so noticing it at all proves it is noticed at once; the wait is only a
  # hang bound.
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  run_agent_bg -o ServerAliveInterval=0 w-0 "$REMOTE_SLEEP"
  wait_for 10 remote_started || fail "remote command never started"
  sessions=$(sshd_sessions)
  [ -n "$sessions" ] || fail "no sshd session process"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  kill -9 $sessions "$(sshd_pid)"
  wait_agent 30
  ms=$(ms_since $t0)
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'w-0' "$T/err" || fail "host not named: $(cat "$T/err")"
  grep -q 'no answer' "$T/err" && fail "noticed by a keepalive, not the socket: $(cat "$T/err")"
  ok "$ms ms: $(cat "$T/err")"
  ;;
sigterm-mid-command|sigquit-mid-command)
  # QUIT as TERM: forwarded under its own name, the agent exits 128+N
  # (131, 143). The command must not dump core on the pod either.
  sig=TERM want=143
  [ "$SCENARIO" = sigquit-mid-command ] && sig=QUIT want=131
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  run_agent_bg w-0 "ulimit -c 0; $REMOTE_SLEEP"
  wait_for 10 remote_started || fail "remote command never started"
  kill -$sig "$AGENT_PID"
  wait_agent 10
  [ $RC -eq $want ] || fail "rc $RC, want $want"
  grep -q "interrupted by signal $((want - 128))" "$T/err" || fail "killed, not interrupted: $(cat "$T/err")"
  grep -q "\"detail\":\"signal $sig\",\"event\":\"exited\"" "$T/trace.jsonl" || fail "not forwarded as $sig: $(cat "$T/trace.jsonl")"
  wait_for 5 sh -c "! kill -0 $(cat "$T/remote.pid") 2>/dev/null" || fail "remote command still running"
  ok "agent $want, remote command gone: $(tr '\n' ' ' < "$T/err")"
  ;;
sigquit-no-core)
  # Under `ulimit -c unlimited`, SIGQUIT while the agent waits must not
  # dump core: its memory holds the private key and the token. The kernel
  # shows the limit (/proc/PID/limits) whatever core_pattern does; base_test
  # checks the dumpable flag, which /proc does not show.
  pod w-0 '{"phase":"Pending","waitingReason":"ContainerCreating"}'
  api POST /_control/stats/reset
  mkdir "$T/cwd"
  # A background job starts with SIGQUIT ignored: give it the default
  # action (a core dump), as from a terminal.
  (cd "$T/cwd" && ulimit -c unlimited && exec env --default-signal=QUIT "$AGENT" "${SSH_ARGS[@]}" --timeout 60s w-0 true > "$T/out" 2> "$T/err") &
  AGENT_PID=$!
  wait_watching 1
  limit=$(awk '/^Max core file size/ {print $5, $6}' "/proc/$AGENT_PID/limits")
  [ "$limit" = "0 0" ] || fail "core file size limit while waiting: '$limit', want '0 0'"
  kill -QUIT "$AGENT_PID"
  wait_agent 10
  [ $RC -eq 131 ] || fail "rc $RC, want 131"
  grep -q '^k8s-agent: w-0: interrupted by signal 3$' "$T/err" || fail "killed, not interrupted: $(cat "$T/err")"
  [ -z "$(ls -A "$T/cwd")" ] || fail "left in its cwd: $(ls -A "$T/cwd")"
  ok "exit 131, core limit 0 0, nothing dumped: $(cat "$T/err")"
  ;;
sigterm-ignored)
  # The remote command ignores the forwarded TERM: the exec channel's one
  # grace timer ends the wait, and the agent still exits 143. Without it
  # the agent would wait for the command (30 s); the wait is a hang bound.
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  run_agent_bg w-0 "trap '' TERM INT HUP; $REMOTE_SLEEP"
  wait_for 10 remote_started || fail "remote command never started"
  kill -TERM "$AGENT_PID"
  wait_agent 20
  [ $RC -eq 143 ] || fail "rc $RC, want 143 (124: the grace timer never fired)"
  grep -q '"detail":"signal TERM","event":"exited"' "$T/trace.jsonl" || fail "trace: $(cat "$T/trace.jsonl")"
  ok "gave up on the command after the grace: $(tr '\n' ' ' < "$T/err")"
  ;;
sshd-stopped)
  # A hung peer (SIGSTOP): only keepalives can tell. libssh2 (1.11.1, as
  # 1.10) ticks at 2 s at least, and CountMax + 1 = 3 silent ticks are allowed: the agent
  # must have measured at least 6 s of silence itself (load only makes it
  # later; the wait is bounded to catch a hang, not to time it).
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  run_agent_bg -o ServerAliveInterval=1 -o ServerAliveCountMax=2 w-0 "$REMOTE_SLEEP"
  wait_for 10 remote_started || fail "remote command never started"
  sessions=$(sshd_sessions)
  [ -n "$sessions" ] || fail "no sshd session process"
  read -r -a stopped <<< "$(echo $sessions)"; STOPPED_PIDS+=("${stopped[@]}")
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  kill -STOP $sessions
  wait_agent 40
  ms=$(ms_since $t0)
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'w-0' "$T/err" || fail "host not named: $(cat "$T/err")"
  grep -qi 'ServerAlive\|keepalive\|not respond' "$T/err" || fail "cause not named: $(cat "$T/err")"
  silence=$(sed -n 's/.*no answer from [^ ]* for \([0-9.]*\)s (.*/\1/p' "$T/err")
  awk -v s="${silence:-0}" 'BEGIN { exit !(s >= 6.0) }' || fail "gave up after '$silence' s of silence, want >= 6.0"
  ok "$ms ms, $silence s of silence: $(cat "$T/err")"
  ;;
closed-stdio)
  # Started with stdin, stdout or stderr closed, the agent must not hand
  # that fd number to the first thing it opens (the trace, the signalfd):
  # it exits with the remote status, as ssh does (sanitise_stdfd). Run
  # with and without the trace, whose file would otherwise become "stdout".
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  CMD='cat; echo out; echo err >&2; exit 7'
  for closed in '<&-' '>&-' '2>&-'; do
    for trace in "$T/trace.jsonl" ""; do
      : > "$T/trace.jsonl"
      K8S_AGENT_TRACE=$trace timeout 20 bash -c "exec \"\$@\" < /dev/null > $T/out 2> $T/err $closed" _ "$AGENT" "${SSH_ARGS[@]}" w-0 "$CMD"
      RC=$?
      [ $RC -eq 7 ] || fail "$closed (trace '${trace}'): rc $RC, want the remote's 7 (124: hung)"
      grep -qv '^{' "$T/trace.jsonl" && fail "$closed: remote output in the trace: $(cat "$T/trace.jsonl")"
    done
    timeout 20 bash -c "exec \"\$@\" < /dev/null > /dev/null 2>&1 $closed" _ "${OPENSSH[@]}" "$CMD"
    ssh_rc=$?
    [ $ssh_rc -eq 7 ] || fail "OpenSSH with $closed: rc $ssh_rc"
  done
  ok "rc 7 with each of fds 0-2 closed, as OpenSSH"
  ;;
stdout-reader-gone)
  # `k8s-agent w-0 yes | head -1`: once head has gone, writing stdout fails
  # with EPIPE. The agent closes the channel (sshd closes the command's
  # pipes: yes dies of SIGPIPE) and exits 255, as ssh does; without that it
  # ran until killed. The timeout only bounds a hang.
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  first=$(timeout 30 "$AGENT" "${SSH_ARGS[@]}" w-0 "$REMOTE_YES" 2> "$T/err" | head -1)
  RC=${PIPESTATUS[0]}
  [ "$first" = y ] || fail "first line: '$first'"
  [ $RC -eq 255 ] || fail "rc $RC, want 255 as ssh (124: still running)"
  grep -q 'stdout.*Broken pipe' "$T/err" || fail "cause not named: $(cat "$T/err")"
  wait_for 10 remote_gone || fail "remote yes still running"
  rm -f "$T/remote.pid"
  ssh_first=$(timeout 30 "${OPENSSH[@]}" "$REMOTE_YES" 2>/dev/null | head -1)
  ssh_rc=${PIPESTATUS[0]}
  [ "$ssh_first" = y ] && [ $ssh_rc -eq 255 ] || fail "OpenSSH: '$ssh_first', rc $ssh_rc"
  wait_for 10 remote_gone || fail "remote yes still running after OpenSSH"
  ok "255 and the remote yes gone, as OpenSSH: $(cat "$T/err")"
  ;;
sigterm-stdout-full|keepalive-stdout-full)
  # Stdout is a pipe whose reader never reads. The agent must wait for it
  # in the loop, not in write(): a TERM is forwarded and ends it (143), and
  # a hung server is still detected by keepalives (255), although the pipe
  # never drains. Blocked in write(), it did neither.
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  # The reader shrinks the pipe to one page, below any chunk the agent
  # writes, so a blocking write() would surely block.
  mkfifo "$T/fifo"
  /usr/bin/python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ
open(sys.argv[2], "w").close()
time.sleep(300)' "$T/fifo" "$T/reader.ready" &
  AFTER_PIDS+=($!)
  wait_for 10 test -e "$T/reader.ready" || fail "fifo reader did not start"
  extra=()
  [ "$SCENARIO" = keepalive-stdout-full ] && extra=(-o ServerAliveInterval=1 -o ServerAliveCountMax=2)
  "$AGENT" "${SSH_ARGS[@]}" "${extra[@]}" w-0 "$REMOTE_YES" > "$T/fifo" 2> "$T/err" &
  AGENT_PID=$!
  wait_for 10 remote_started || fail "remote command never started"
  wait_for 20 pipe_full "$T/fifo" || fail "stdout pipe never filled"
  if [ "$SCENARIO" = sigterm-stdout-full ]; then
    kill -TERM "$AGENT_PID"
    wait_agent 20
    [ $RC -eq 143 ] || fail "rc $RC, want 143 (124: the TERM was not served)"
    wait_for 10 remote_gone || fail "remote yes still running"
  else
    sessions=$(sshd_sessions)
    [ -n "$sessions" ] || fail "no sshd session process"
    read -r -a stopped <<< "$(echo $sessions)"; STOPPED_PIDS+=("${stopped[@]}")
    # shellcheck disable=SC2086
    kill -STOP $sessions
    wait_agent 40
    [ $RC -eq 255 ] || fail "rc $RC, want 255 (124: keepalives not served)"
    grep -q 'no answer from w-0' "$T/err" || fail "cause not named: $(cat "$T/err")"
  fi
  ok "rc $RC with a full stdout pipe: $(tr '\n' ' ' < "$T/err")"
  ;;
no-token-leak)
  # Every failure path, at the highest verbosity, with the trace on: the
  # token (good or bad) must not appear in anything the agent wrote.
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  printf 'bad-token-%s' "$(openssl rand -hex 8)" > "$T/bad-token"
  good=$(cat "$T/api/token"); bad=$(cat "$T/bad-token")
  : > "$T/all"
  collect() { cat "$T/out" "$T/err" >> "$T/all"; }
  K8S_AGENT_TOKEN_FILE="$T/bad-token" run_agent -vv --timeout 3s w-0 true; collect
  [ $RC -eq 255 ] || fail "401: rc $RC"
  K8S_AGENT_CERTIFICATE_AUTHORITY="$T/api/other-ca.crt" run_agent -vv --timeout 3s w-0 true; collect
  [ $RC -eq 255 ] || fail "wrong CA: rc $RC"
  api POST /_control/faults '{"status":403,"count":1}'
  run_agent -vv --timeout 3s w-0 true; collect
  [ $RC -eq 255 ] || fail "403: rc $RC"
  api POST /_control/faults '[{"status":500,"count":1},{"status":401,"count":1}]'
  run_agent -vv --timeout 3s w-0 true; collect
  api POST /_control/faults '{"status":410,"count":1,"method":"WATCH","in_stream":true}'
  run_agent -vv --timeout 2s w-late true; collect
  run_agent -vv --hostfile --selector role=none; collect
  start_sshd
  run_agent -vv w-0 'env; echo done'; collect
  [ $RC -eq 0 ] || fail "good run: rc $RC"
  cat "$T/trace.jsonl" >> "$T/all"
  [ "$(wc -l < "$T/all")" -gt 10 ] || fail "suspiciously little output"
  grep -qF -- "$good" "$T/all" && fail "good token leaked: $(grep -F -- "$good" "$T/all")"
  grep -qF -- "$bad" "$T/all" && fail "bad token leaked: $(grep -F -- "$bad" "$T/all")"
  grep -qi 'authorization: bearer [^*<]' "$T/all" && fail "an Authorization header was logged"
  ok "$(wc -l < "$T/all") lines of output and trace, no token"
  ;;
trace-report)
  # --trace carries the pod's own timeline; --report turns it into phases.
  # The agent's watch shows it has seen ContainerCreating; only then does
  # the pod start, and sshd once it runs.
  pod w-0 '{"phase":"Pending","waitingReason":"ContainerCreating"}'
  run_agent_bg --timeout 30s w-0 true
  wait_watching 1
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  wait_agent 30
  [ $RC -eq 0 ] || fail "rc $RC"
  trace_has begin
  grep '"event":"pod_status"' "$T/trace.jsonl" | grep -q '"waiting":\["ContainerCreating"\]' ||
    fail "no pod_status record with the waiting reason"
  grep '"event":"pod_status"' "$T/trace.jsonl" | grep '"container_started":"' | grep -q '"PodScheduled":"' ||
    fail "no pod_status record with container_started and PodScheduled"
  grep '"event":"ssh_ready"' "$T/trace.jsonl" | grep -q '"attempt_t_mono_us":' || fail "ssh_ready without the attempt time"
  "$AGENT" --report --format json "$T/trace.jsonl" > "$T/report.json" 2> "$T/err" || fail "--report failed"
  python3 - "$T/report.json" <<'PY' || fail "report: $(cat "$T/report.json")"
import json, sys
r = json.load(open(sys.argv[1]))
h = r["hosts"][0]
assert h["host"] == "w-0" and h["reached"], h
for phase in ("container", "sshd", "handshake", "command"):
    assert phase in h["phases_ms"], (phase, h["phases_ms"])
assert h["marks_ms"]["created"] is not None and h["marks_ms"]["container_started"] is not None, h
assert "ContainerCreating" in [w["reason"] for w in h["waiting"]], h
assert r["critical"]["host"] == "w-0", r["critical"]
PY
  "$AGENT" --report "$T/trace.jsonl" > "$T/out" 2> "$T/err" || fail "--report text failed"
  grep -q '^w-0 ' "$T/out" || fail "no row for w-0 in the text report"
  ok "pod timeline traced; report: $(grep -o 'critical .*' "$T/out")"
  ;;
stale-version)
  # The pod has not changed for longer than the watch history holds (the
  # real cache keeps ~75 s and starts empty after a restart): its own RV
  # is too old to watch from. Expect the cached LIST + one WATCH from the
  # list's version, no 410 and no quorum LIST (issue 14 item 1).
  start_sshd
  pod w-0 '{"phase":"Pending","waitingReason":"ContainerCreating"}'
  api POST /_control/faults '{"history_events":3}'
  for i in 1 2 3 4 5; do pod w-1 "{\"phase\":\"Pending\",\"message\":\"$i\"}"; done
  api POST /_control/stats/reset
  run_agent_bg --timeout 20s w-0 echo fresh
  wait_watching 1
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1","waitingReason":null}'
  wait_agent 15
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = fresh ] || fail "stdout: $(cat "$T/out")"
  [ "$(stat expired_watches)" = 0 ] || fail "a watch got 410 (watched from the pod's own stale RV)"
  [ "$(stat quorum_lists)" = 0 ] || fail "$(stat quorum_lists) quorum LIST(s)"
  [ "$(requests)" = 2 ] || fail "expected LIST+WATCH = 2 requests, got $(requests)"
  ok "2 requests, no 410, no quorum read"
  ;;
forbidden-once)
  # RBAC's caches are cold right after an API server start: one 403 for the
  # lookup and one for the watch, then the same requests are allowed.
  # Expect each retried (said at -v) and the command run.
  start_sshd
  pod w-0 '{"phase":"Pending"}'
  api POST /_control/faults '[{"status":403,"count":1,"method":"LIST"},{"status":403,"count":1,"method":"WATCH"}]'
  api POST /_control/stats/reset
  run_agent_bg -v --timeout 20s w-0 echo allowed
  wait_watching 2
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  wait_agent 15
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = allowed ] || fail "stdout"
  grep -q 'RBAC may still be catching up; retrying for up to .*forbidden: .*; retrying in' "$T/err" || fail "retry not said at -v: $(cat "$T/err")"
  [ "$(count_of LIST)" = 2 ] && [ "$(count_of WATCH)" = 2 ] || fail "expected 403 + 1 good LIST and WATCH each, got $(count_of LIST) + $(count_of WATCH)"
  ok "$(grep -c 'RBAC may still' "$T/err") note(s) at -v, then ran"
  ;;
forbidden)
  # A real RBAC gap: 403 every time. Expect a few retries within the short
  # window, then today's message naming the verb and the Role file.
  pod w-0 '{"phase":"Pending"}'
  api POST /_control/faults '{"status":403,"count":1000,"method":"LIST"}'
  api POST /_control/stats/reset
  run_agent --timeout 60s w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'forbidden: the service account cannot "list" "pods" in namespace "default" (grant get/list/watch on pods: see images/k8s/role.yaml)' "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 'pods \"w-0\" is forbidden\|pods is forbidden' "$T/err" || fail "server's reason missing: $(cat "$T/err")"
  [ "$(count_of LIST)" -ge 2 ] || fail "expected retries before failing, got $(count_of LIST) LIST(s)"
  api POST /_control/faults '{"clear":true}'
  ok "$(count_of LIST) tries: $(cat "$T/err")"
  ;;
bare-pod-deleted)
  # A pod nothing owns is deleted (Terminating for its grace period): it
  # will never come back, so the agent fails at once, naming the deletion.
  pod w-0 '{"phase":"Pending"}'
  run_agent_bg --timeout 60s w-0 true
  wait_watching 1
  api DELETE '/_control/pods/default/w-0?grace=30'
  wait_agent 10
  [ $RC -eq 255 ] || fail "rc $RC (124: still waiting after the deletion)"
  grep -q 'pod default/w-0 is being deleted and no controller owns it' "$T/err" || fail "message: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
statefulset-pod-recreated)
  # A StatefulSet's pod is deleted (MODIFIED with deletionTimestamp, then
  # DELETED after 1 s) and recreated with a new uid: the agent waits for it.
  start_sshd
  pod w-0 '{"phase":"Pending","owner":"StatefulSet/w"}'
  run_agent_bg --timeout 30s w-0 echo replaced
  wait_watching 1
  api DELETE '/_control/pods/default/w-0?grace=1'
  gone() { ! fake_apiserver_control "$T/api" GET /api/v1/namespaces/default/pods/w-0 >/dev/null 2>&1; }
  wait_for 10 gone || fail "the fake never finished the deletion"
  kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent gave up on a controlled pod"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1","owner":"StatefulSet/w"}'
  wait_agent 15
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = replaced ] || fail "stdout: $(cat "$T/out")"
  ok "waited through Terminating and DELETED for the new pod"
  ;;
job-pod-recreated)
  # An Indexed Job's pod, found by spec.hostname, is deleted; the Job's
  # replacement has a new name and the same hostname: HOST is resolved
  # again and the command runs on the new pod.
  start_sshd
  J='"hostname":"job-0","subdomain":"job","owner":"Job/job"'
  pod job-0-x7k2p "{\"phase\":\"Pending\",$J}"
  run_agent_bg --timeout 30s job-0.job.default.svc.cluster.local echo again
  wait_watching 1
  api DELETE '/_control/pods/default/job-0-x7k2p?grace=1'
  gone() { ! fake_apiserver_control "$T/api" GET /api/v1/namespaces/default/pods/job-0-x7k2p >/dev/null 2>&1; }
  wait_for 10 gone || fail "the fake never finished the deletion"
  kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent gave up on a Job's pod"
  pod job-0-q9z4m "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$J}"
  wait_agent 20
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = again ] || fail "stdout: $(cat "$T/out")"
  grep -q '"resolved".*job-0-q9z4m' "$T/trace.jsonl" || fail "trace does not show the new pod resolved"
  ok "followed job-0 from job-0-x7k2p to job-0-q9z4m"
  ;;
job-pod-failed-retried)
  # An Indexed Job keeps the Failed pod of an attempt next to its
  # replacement, both with spec.hostname job-0: the live one is the target
  # (not "matches 2 pods"), and -v names the one passed over.
  start_sshd
  J='"hostname":"job-0","subdomain":"job","owner":"Job/job"'
  pod job-0-x7k2p "{\"phase\":\"Failed\",$J}"
  pod job-0-q9z4m "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$J}"
  run_agent -v --timeout 20s job-0.job.default.svc.cluster.local echo retried
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = retried ] || fail "stdout: $(cat "$T/out")"
  grep -q 'passing over pod job-0-x7k2p: Failed' "$T/err" || fail "-v does not name the Failed pod: $(cat "$T/err")"
  ok "ran on job-0-q9z4m, passed over the Failed job-0-x7k2p"
  ;;
job-pod-failed-replaced-later)
  # Only the Failed attempt has the hostname: the Job may still retry the
  # index, so the agent keeps looking (lists again) and uses the new pod.
  start_sshd
  J='"hostname":"job-0","subdomain":"job","owner":"Job/job"'
  pod job-0-x7k2p "{\"phase\":\"Failed\",$J}"
  api POST /_control/stats/reset
  run_agent_bg --timeout 30s job-0.job.default.svc.cluster.local echo retried
  # The name lookup, the hostname list, then one more: it kept looking
  # (or it gave up, which ends the wait at once).
  looked_again() { ! kill -0 "$AGENT_PID" 2>/dev/null || [ "$(count_of LIST)" -ge 3 ]; }
  wait_for 20 looked_again || fail "the agent did not look again"
  kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent gave up on the Failed Job pod"
  pod job-0-q9z4m "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$J}"
  wait_agent 20
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = retried ] || fail "stdout: $(cat "$T/out")"
  ok "waited for job-0's retry after $(count_of LIST) lists"
  ;;
hostfile-relabel)
  # A selector watch: a pod that starts matching arrives as ADDED (from a
  # MODIFIED that changed its labels), one that stops matching as DELETED.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1","labels":{"role":"worker"}}'
  pod w-1 '{"phase":"Running","podIP":"127.0.0.1","labels":{"role":"worker"}}'
  pod w-2 '{"phase":"Running","podIP":"127.0.0.1","labels":{"role":"spare"}}'
  run_agent_bg --hostfile --selector role=worker --wait-for-count 3 --timeout 20s
  wait_watching 1
  pod w-1 '{"labels":{"role":"spare"}}'
  pod w-2 '{"labels":{"role":"worker"}}'
  pod w-10 '{"phase":"Running","podIP":"127.0.0.1","labels":{"role":"worker"}}'
  wait_agent 15
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = "$(printf 'w-0\nw-2\nw-10')" ] || fail "stdout: $(cat "$T/out")"
  ok "w-1 left the selection, w-2 joined it"
  ;;
fake-fidelity)
  # The fake server's own behaviour where kube-apiserver's matters
  # (tests/fake_apiserver/fake_apiserver.py docstring), checked with curl.
  raw() { curl -sS --cacert "$T/api/ca.crt" -H "Authorization: Bearer $(cat "$T/api/token")" -o "$T/body" -w '%{http_code}' "https://127.0.0.1:$FAKE_APISERVER_PORT$1"; }
  pods=/api/v1/namespaces/default/pods
  [ "$(raw "$pods?watch=true&resourceVersion=abc")" = 500 ] || fail "malformed RV: $(cat "$T/body")"
  [ "$(raw "$pods?resourceVersion=abc")" = 500 ] || fail "malformed RV on LIST: $(cat "$T/body")"
  api POST /_control/faults '{"status":403,"count":1,"method":"GET"}'
  [ "$(raw "$pods/w-0")" = 403 ] || fail "403 fault"
  grep -q '"details": {"kind": "pods", "name": "w-0"}' "$T/body" || fail "403 without details: $(cat "$T/body")"
  grep -q 'pods \\"w-0\\" is forbidden' "$T/body" || fail "403 message: $(cat "$T/body")"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1","labels":{"role":"worker"}}'
  pod w-1 '{"phase":"Running","podIP":"127.0.0.1","labels":{"role":"worker"}}'
  rv=$(fake_apiserver_control "$T/api" GET "$pods?resourceVersion=0" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
  # A 10 s watch (the steps below take well under a second): a bookmark
  # must come 2 s before its end.
  curl -sS -N --cacert "$T/api/ca.crt" -H "Authorization: Bearer $(cat "$T/api/token")" \
    "https://127.0.0.1:$FAKE_APISERVER_PORT$pods?watch=true&labelSelector=role%3Dworker&resourceVersion=$rv&allowWatchBookmarks=true&timeoutSeconds=10" > "$T/watch" &
  AFTER_PIDS+=($!)
  wait_watching 1
  pod w-1 '{"labels":{"role":"spare"}}'
  pod w-1 '{"labels":{"role":"worker"}}'
  api DELETE /_control/pods/default/w-0
  pod w-9 '{"phase":"Pending","labels":{"role":"spare"}}'  # moves the global RV
  wait "${AFTER_PIDS[-1]}"
  types=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in open(sys.argv[1]) if l.strip() and json.loads(l)["type"] != "BOOKMARK"))' "$T/watch")
  [ "$types" = "DELETED ADDED MODIFIED DELETED" ] || fail "watch events: $types"
  /usr/bin/python3 - "$T/watch" <<'PY' || fail "event contents: $(cat "$T/watch")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
marks = [i for i, e in enumerate(ev) if e["type"] == "BOOKMARK"]
assert len(marks) == 1, "want one bookmark, 2 s before timeoutSeconds"
left, _, terminating, deleted = [e for e in ev if e["type"] != "BOOKMARK"]
assert left["object"]["metadata"]["labels"] == {"role": "worker"}, left  # last matching object
assert terminating["object"]["metadata"].get("deletionTimestamp"), terminating
assert deleted["object"]["metadata"]["name"] == "w-0", deleted
bookmark = ev[marks[0]]["object"]["metadata"]
assert set(bookmark) == {"resourceVersion"}, bookmark  # a bare Pod
seen = [int(e["object"]["metadata"]["resourceVersion"]) for e in ev[:marks[0]]]
assert int(bookmark["resourceVersion"]) >= max(seen, default=0), bookmark
PY
  # A bounded history: a watch from the first version kept no longer is 410.
  api POST /_control/faults '{"history_events":2}'
  raw "$pods?watch=true&resourceVersion=$rv&timeoutSeconds=1" >/dev/null
  grep -q '"code": 410' "$T/body" || fail "no 410 after the history: $(cat "$T/body")"
  ok "500, 403 details, selector DELETED/ADDED, terminating then DELETED, bookmarks, 410"
  ;;
*)
  fail "unknown scenario"
  ;;
esac
