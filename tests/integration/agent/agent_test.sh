#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The k8s-agent binary against the fake API server (real TLS) and a real
# sshd on loopback. Each scenario is one ctest test:
#   agent_test.sh AGENT_BINARY SCENARIO
set -uo pipefail

AGENT=$1
SCENARIO=$2
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
  # sshd may have been started from a background subshell: its pid is in
  # a file, and it is killed by pid, never by name.
  local pid
  pid=$(cat "$T/sshd.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
  fake_apiserver_stop "$T/api"
  rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL [$SCENARIO]: $*" >&2; for f in "$T"/out "$T"/err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; } >&2; done; exit 1; }
ok() { echo "ok [$SCENARIO]: $*"; }

# ---- sshd on 127.0.0.1, own keys, user key authorised --------------------
free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
SSH_PORT=$(free_port)
mkdir -p "$T/ssh" /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/id_ed25519"
cp "$T/ssh/id_ed25519.pub" "$T/ssh/authorized_keys"
: > "$T/ssh/empty_bashrc"
cat > "$T/ssh/sshd_config" <<CFG
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $T/ssh/host_key
PidFile none
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AuthorizedKeysFile $T/ssh/authorized_keys
UseDNS no
CFG
# known_hosts: the key under the host names Open MPI would pass, in ssh's
# [name]:port form for a port other than 22, as k8s-agent checks it.
hostkey=$(cut -d' ' -f1,2 "$T/ssh/host_key.pub")
names=""
for h in w-0 w-1 w-2 w-10 w-late job-0.job.default.svc.cluster.local; do names+="[$h]:$SSH_PORT,"; done
printf '%s %s\n' "${names%,}" "$hostkey" > "$T/ssh/known_hosts"

start_sshd() {
  # A private mount namespace hides root's ~/.bashrc (pyenv init costs
  # ~150 ms per command) from this sshd only.
  setsid unshare --mount sh -c "mount --bind $T/ssh/empty_bashrc /root/.bashrc 2>/dev/null; exec /usr/sbin/sshd -D -e -f $T/ssh/sshd_config" \
    >> "$T/sshd.log" 2>&1 < /dev/null &
  echo $! > "$T/sshd.pid"
  for _ in $(seq 1 100); do
    (exec 3<>/dev/tcp/127.0.0.1/$SSH_PORT) 2>/dev/null && return 0
    sleep 0.05
  done
  fail "sshd did not start: $(cat "$T/sshd.log")"
}

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
remote_alive() { kill -0 "$(cat "$T/remote.pid")" 2>/dev/null; }
# Per-connection sshd processes: children of the listener (by pid).
sshd_sessions() { pgrep -P "$(cat "$T/sshd.pid")"; }
wait_watching() {  # wait_watching N: until N WATCH requests were counted
  wait_for 10 watches_at_least "$1" || fail "never saw $1 watch(es)"
}
watches_at_least() {
  local n
  n=$(fake_apiserver_control "$T/api" GET /_control/stats | /usr/bin/python3 -c 'import json,sys; print(sum(v for k,v in json.load(sys.stdin)["requests"].items() if k.startswith("WATCH")))') || return 1
  [ "$n" -ge "$1" ]
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
  for e in resolved pod_running ssh_ready started exited; do trace_has $e; done
  ok "one GET, command ran through the remote shell"
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
  start_sshd
  api POST /_control/stats/reset
  after 1 pod w-late '{"phase":"Running","podIP":"127.0.0.1"}'
  run_agent w-late hostname
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(requests)" = 3 ] || fail "expected GET+LIST+WATCH = 3 requests, got $(requests)"
  ok "waited for creation with 3 API calls"
  ;;
pending-then-running)
  start_sshd
  pod w-0 '{"phase":"Pending","waitingReason":"ContainerCreating"}'
  api POST /_control/stats/reset
  after 1 pod w-0 '{"phase":"Running","podIP":"127.0.0.1","waitingReason":null}'
  run_agent w-0 true
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(requests)" = 2 ] || fail "expected GET+WATCH = 2 requests, got $(requests)"
  ok "GET then one watch"
  ;;
running-before-sshd)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  after 1.5 start_sshd
  t0=$(date +%s%N)
  run_agent w-0 echo up
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = up ] || fail "stdout"
  attempts=$(grep '"ssh_ready"' "$T/trace.jsonl" | sed 's/.*after \([0-9]*\) attempt.*/\1/')
  [ "${attempts:-0}" -gt 1 ] || fail "expected retries before sshd listened, got '$attempts'"
  ok "ssh refused $attempts times, then ready; $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  ;;
failed-mid-wait)
  pod w-0 '{"phase":"Pending"}'
  after 1 pod w-0 '{"phase":"Failed","reason":"Evicted","message":"The node was low on resource: memory."}'
  t0=$(date +%s%N)
  run_agent w-0 true
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ $RC -eq 255 ] || fail "rc $RC, want 255"
  grep -q 'k8s-agent: w-0: pod default/w-0 is Failed: Evicted: The node was low on resource: memory.' "$T/err" || fail "message"
  [ $ms -lt 5000 ] || fail "took $ms ms to fail"
  ok "failed fast in $ms ms: $(cat "$T/err")"
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
  after 1 pod w-late '{"phase":"Running","podIP":"127.0.0.1"}'
  t0=$(date +%s%N)
  run_agent --hostfile --selector role=worker --wait-for-count 3 --ssh-ready --slots 1 --timeout 20s
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = "$(printf 'w-0 slots=1\nw-1 slots=1\nw-late slots=1')" ] || fail "stdout: $(cat "$T/out")"
  [ "$(requests)" = 2 ] || fail "expected LIST + one WATCH, got $(requests) requests"
  [ $ms -lt 5000 ] || fail "took $ms ms"
  ok "3 of 3 after $ms ms with one watch"
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
  sleep 0.5  # let the agent see the refused connections and back off
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  wait_agent 15
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = resumed ] || fail "stdout: $(cat "$T/out")"
  ok "resumed against the restarted server: $(tr '\n' ' ' < "$T/err")"
  ;;
watch-drops)
  # Every watch is cut after ~0.5 s while the pod goes Pending -> Running.
  start_sshd
  pod w-0 '{"phase":"Pending","waitingReason":"ContainerCreating"}'
  api POST /_control/stats/reset
  run_agent_bg --timeout 20s w-0 echo through
  wait_watching 1
  t0=$(date +%s%N)
  for _ in 1 2 3 4; do sleep 0.5; api POST /_control/faults '{"drop_watches":true}'; done
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1","waitingReason":null}'
  api POST /_control/faults '{"drop_watches":true}'
  wait_agent 15
  ms=$(ms_since $t0)
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = through ] || fail "stdout"
  w=$(count_of WATCH)
  [ "$w" -ge 2 ] || fail "expected re-watches after drops, got $w watches"
  # Each drop costs a jittered backoff (client-go defaults: 0.8 s doubling),
  # so the bound is loose; the point is that it resumes.
  [ $ms -lt 10000 ] || fail "Running seen after $ms ms"
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
  api POST /_control/faults '{"status":429,"count":1,"retry_after":2,"method":"GET"}'
  t0=$(date +%s%N)
  run_agent --timeout 20s w-0 echo later
  ms=$(ms_since $t0)
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = later ] || fail "stdout"
  [ $ms -ge 2000 ] || fail "came back after $ms ms, before Retry-After 2 s"
  [ $ms -lt 6000 ] || fail "took $ms ms"
  ok "waited $ms ms for Retry-After: 2"
  ;;
burst-500)
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/faults '{"status":500,"count":3,"method":"GET"}'
  api POST /_control/stats/reset
  t0=$(date +%s%N)
  run_agent --timeout 20s w-0 echo survived
  ms=$(ms_since $t0)
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = survived ] || fail "stdout"
  [ "$(count_of GET)" -ge 4 ] || fail "expected 3 failed GETs and one good, got $(count_of GET)"
  [ $ms -lt 10000 ] || fail "took $ms ms"
  ok "3 x 500 then success in $ms ms"
  ;;
slow-api)
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/faults '{"delay_ms":1500,"count":1,"method":"GET"}'
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
  [ $ms -lt 5000 ] || fail "took $ms ms: an auth refusal is not worth retrying until the timeout"
  ok "$ms ms: $(cat "$T/err")"
  ;;
sshd-killed)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  run_agent_bg w-0 "$REMOTE_SLEEP"
  wait_for 10 remote_started || fail "remote command never started"
  sessions=$(sshd_sessions)
  [ -n "$sessions" ] || fail "no sshd session process"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  kill -9 $sessions "$(cat "$T/sshd.pid")"
  wait_agent 10
  ms=$(ms_since $t0)
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'w-0' "$T/err" || fail "host not named: $(cat "$T/err")"
  [ $ms -lt 3000 ] || fail "took $ms ms to notice"
  ok "$ms ms: $(cat "$T/err")"
  ;;
sigterm-mid-command)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  run_agent_bg w-0 "$REMOTE_SLEEP"
  wait_for 10 remote_started || fail "remote command never started"
  kill -TERM "$AGENT_PID"
  wait_agent 10
  [ $RC -eq 143 ] || fail "rc $RC, want 143"
  wait_for 5 sh -c "! kill -0 $(cat "$T/remote.pid") 2>/dev/null" || fail "remote command still running"
  ok "agent 143, remote command gone: $(tr '\n' ' ' < "$T/err")"
  ;;
sshd-stopped)
  # A hung peer (SIGSTOP): only keepalives can tell. libssh2 1.10 ticks at
  # 2 s at least, and CountMax + 1 = 3 silent ticks are allowed: 4-6 s.
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
  wait_agent 10
  ms=$(ms_since $t0)
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'w-0' "$T/err" || fail "host not named: $(cat "$T/err")"
  grep -qi 'ServerAlive\|keepalive\|not respond' "$T/err" || fail "cause not named: $(cat "$T/err")"
  [ $ms -ge 3500 ] && [ $ms -lt 8000 ] || fail "detected after $ms ms, want ~4-6 s"
  ok "$ms ms: $(cat "$T/err")"
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
*)
  fail "unknown scenario"
  ;;
esac
