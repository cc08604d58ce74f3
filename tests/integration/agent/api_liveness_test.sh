#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A dead, slow, watch-failing or stopped API server,
# with agent_lib.sh's setup (fake API server, loopback sshd).
#   api_liveness_test.sh AGENT_BINARY SCENARIO
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

pings_at_least() { [ "$(grep -c "sent an HTTP/2 PING" "$T/err")" -ge "$1" ]; }

case "$SCENARIO" in
dead-server)
  # Nothing listens at the server's address: fail after the first-answer
  # budget (set through the environment here), not after --timeout.
  t0=$(date +%s%N)
  K8S_AGENT_SERVER=https://127.0.0.1:1 K8S_AGENT_API_FIRST_ANSWER_TIMEOUT=2s \
    run_agent w-0 true
  took=$(ms_since "$t0")
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -Eq "the API server https://127.0.0.1:1 never answered within 2.0s \((connection refused|could not connect)" "$T/err" \
    || fail "message does not name the server and the failure"
  grep -q "check --server, KUBERNETES_SERVICE_HOST" "$T/err" || fail "message says nothing to check"
  [ "$took" -lt 15000 ] || fail "took ${took} ms"
  ok "dead server failed in ${took} ms: $(tr '\n' ' ' < "$T/err")"
  ;;
hostfile-dead-server)
  # --hostfile (the launcher's first call, before any agent call) gets the
  # same first-answer budget as a host lookup.
  t0=$(date +%s%N)
  K8S_AGENT_SERVER=https://127.0.0.1:1 \
    run_agent --api-first-answer-timeout 2s --hostfile --selector role=worker --wait-for-count 2
  took=$(ms_since "$t0")
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -Eq "listing pods matching role=worker in namespace default: the API server https://127.0.0.1:1 never answered within 2.0s \((connection refused|could not connect)" "$T/err" \
    || fail "message does not name the listing, the server and the failure"
  [ "$took" -lt 15000 ] || fail "took ${took} ms"
  ok "hostfile against a dead server failed in ${took} ms: $(tr '\n' ' ' < "$T/err")"
  ;;
slow-first-list)
  # The first LIST is answered after 17 s: until then the agent says it has
  # no answer yet, never that the pod does not exist.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/faults '{"delay_ms":17000,"method":"LIST","count":1}'
  run_agent --timeout 40s w-0 echo answered
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = answered ] || fail "stdout: $(cat "$T/out")"
  grep -q "does not exist" "$T/err" && fail "claimed the pod does not exist before any answer"
  grep -q "no answer yet from the API server" "$T/err" || fail "no 'no answer yet' progress line"
  ok "slow LIST: $(tr '\n' ' ' < "$T/err")"
  ;;
slow-progressing-list)
  # Three LISTs in a row take 35 s each, bytes trickling all the while: no
  # per-request total cap may cut a progressing answer (only 30 s with no
  # byte at all does), so the first one finishes within --timeout.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/faults '{"trickle_s":35,"method":"LIST","count":3}'
  t0=$(date +%s%N)
  run_agent --timeout 60s w-0 echo finished
  took=$(ms_since "$t0")
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = finished ] || fail "stdout: $(cat "$T/out")"
  grep -q "does not exist" "$T/err" && fail "claimed the pod does not exist before any answer"
  ok "35 s trickled LIST finished; ready in ${took} ms"
  ;;
list-first-byte-late)
  # Every LIST's first byte comes 33 s late (a huge namespace, a slow
  # etcd). The user allowed 70 s for a first answer: each request's stall
  # window follows (it was 30 s, so every LIST was cut and retried, and the
  # agent could never succeed). One LIST, answered.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/stats/reset
  api POST /_control/faults '{"delay_ms":33000,"method":"LIST","count":5}'
  t0=$(date +%s%N)
  run_agent --api-first-answer-timeout 70s --timeout 80s w-0 echo answered
  took=$(ms_since "$t0")
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = answered ] || fail "stdout: $(cat "$T/out")"
  [ "$(count_of LIST)" -eq 1 ] || fail "$(count_of LIST) LISTs: cut and retried"
  [ "$took" -ge 33000 ] || fail "$took ms: the delay did not apply"
  ok "33 s late LIST answered, one request, ready in ${took} ms"
  ;;
watch-always-fails)
  # Every watch gets an in-stream ERROR 500 while LIST works: the agent
  # must relist, or it never sees the pod turn Running.
  start_sshd
  pod w-0 '{"phase":"Pending","waitingReason":"ContainerCreating"}'
  api POST /_control/stats/reset
  api POST /_control/faults '{"status":500,"method":"WATCH","in_stream":true,"count":1000000}'
  run_agent_bg --timeout 30s w-0 echo relisted
  wait_watching 1
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  wait_agent 30
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = relisted ] || fail "stdout: $(cat "$T/out")"
  [ "$(count_of LIST)" -ge 2 ] || fail "no relist: $(count_of LIST) LIST(s)"
  ok "relisted under failing watches: $(count_of LIST) LISTs, $(count_of WATCH) WATCHes"
  ;;
api-stopped)
  # The API server is stopped (SIGSTOP) under an open watch: its socket
  # stays open and silent. With bookmarks every second and a 3 s watch idle
  # limit the agent must notice while it is stopped, and after SIGCONT see
  # the pod turn Running.
  printf '[{"name":"w-0","phase":"Pending"}]' > "$T/pods.json"
  fake_apiserver_restart "$T/api" --pods "$T/pods.json" --bookmark-interval 1 || fail "restart"
  start_sshd
  run_agent_bg -v --watch-idle-timeout 3s --timeout 60s w-0 echo resumed
  wait_watching 1
  api_pid=$(cat "$T/api/apiserver.pid")
  kill -STOP "$api_pid"; STOPPED_PIDS+=("$api_pid")
  t0=$(date +%s%N)
  wait_for 20 grep -q "watch idle for" "$T/err" || fail "the stopped server was never noticed"
  noticed=$(ms_since "$t0")
  kill -CONT "$api_pid"; STOPPED_PIDS=()
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  wait_agent 40
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = resumed ] || fail "stdout: $(cat "$T/out")"
  ok "stopped server noticed in ${noticed} ms: $(grep 'watch idle' "$T/err" | head -1)"
  ;;
api-stopped-h2)
  # The same over HTTP/2 (nghttpx in front of the fake server, as the real
  # kube-apiserver speaks it): the stopped front answers no PING, and the
  # agent must say so well before the watch idle limit (6 s here: a PING
  # after 2 s of quiet, answered within 1 s), with bookmarks every 4 s
  # (quiet long enough between them that answered PINGs keep the watch).
  command -v nghttpx >/dev/null || { echo "SKIP: nghttpx missing (apt-get install nghttp2-proxy; scripts/deps.sh installs it)"; exit 77; }
  printf '[{"name":"w-0","phase":"Pending"}]' > "$T/pods.json"
  fake_apiserver_restart "$T/api" --pods "$T/pods.json" --bookmark-interval 4 || fail "restart"
  h2_port=$(free_port)
  # setsid: nghttpx forks a worker; stopping the session's group stops both.
  # --conf=/dev/null: not the packaged config (a frontend on :3000, a
  # backend on :80); sni: the fake server's certificate names localhost.
  setsid nghttpx --conf=/dev/null --workers=1 --frontend="127.0.0.1,$h2_port" \
    --backend="127.0.0.1,$FAKE_APISERVER_PORT;;tls;sni=localhost" --cacert="$T/api/ca.crt" \
    --backend-read-timeout=0 --no-ocsp --errorlog-file="$T/nghttpx.log" \
    "$T/api/server.key" "$T/api/server.crt" > /dev/null 2>&1 < /dev/null &
  front_pid=$!; AFTER_PIDS+=("$front_pid")
  wait_for 10 curl -s -o /dev/null --http2 --cacert "$T/api/ca.crt" "https://127.0.0.1:$h2_port/version" \
    || fail "nghttpx did not start: $(cat "$T/nghttpx.log")"
  start_sshd
  K8S_AGENT_SERVER="https://127.0.0.1:$h2_port" \
    run_agent_bg -vv --watch-idle-timeout 6s --timeout 60s w-0 echo resumed
  wait_watching 1
  # Two PINGs on the quiet watch, the first answered: an unanswered one
  # would have ended the watch a second after it was sent, before the next.
  wait_for 20 pings_at_least 2 || fail "fewer than 2 PINGs on the quiet watch"
  grep -q "no answer to an HTTP/2 PING" "$T/err" && fail "a PING to the running server went unanswered"
  front_pids=$(pgrep -s "$front_pid" | tr '\n' ' ')
  read -r -a workers <<< "$front_pids"; AFTER_PIDS+=("${workers[@]}")
  # shellcheck disable=SC2086  # a list of pids
  kill -STOP $front_pids; read -r -a stopped <<< "$front_pids"; STOPPED_PIDS+=("${stopped[@]}")
  t0=$(date +%s%N)
  wait_for 20 grep -q "no answer to an HTTP/2 PING" "$T/err" || fail "the stopped server was never noticed"
  noticed=$(ms_since "$t0")
  grep -q "watch idle for" "$T/err" && fail "noticed by the idle limit, not the PING"
  # shellcheck disable=SC2086
  kill -CONT $front_pids; STOPPED_PIDS=()
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  wait_agent 40
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = resumed ] || fail "stdout: $(cat "$T/out")"
  ok "stopped HTTP/2 server noticed in ${noticed} ms: $(grep -m1 'no answer to an HTTP/2 PING' "$T/err")"
  ;;
*)
  fail "unknown scenario"
  ;;
esac
