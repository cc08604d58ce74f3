#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An API server that restarts, drops watches, compacts, throttles
# (429, APF), fails (500, 403) or is slow, and a rotated token: the agent
# rides through each; and the fake server's own fidelity.
# The k8s-agent binary against the fake API server (real TLS) and a real
# sshd on loopback, with agent_lib.sh's setup. Each scenario is one ctest
# test (agent.SCENARIO):
#   api_faults_test.sh AGENT_BINARY SCENARIO
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

case "$SCENARIO" in
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
  [ "$(stat_of expired_watches)" -ge 1 ] || fail "the restart did not expire the watch"
  [ "$(stat_of quorum_lists)" = 0 ] || fail "$(stat_of quorum_lists) quorum LIST(s) after the restart"
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
  ms=$(ms_since "$t0")
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
  ms=$(ms_since "$t0")
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = later ] || fail "stdout"
  [ "$ms" -ge 2000 ] || fail "came back after $ms ms, before Retry-After 2 s"
  # The delay the agent chose is the server's plus jitter of at most one
  # backoff step (Backoff::NextAfter; the first is under 1 s), not a longer
  # backoff.
  delay=$(sed -n 's/.*Retry-After 2.0s.*; retrying in \([0-9.]*\)s$/\1/p' "$T/err")
  { [ -n "$delay" ] && awk -v d="$delay" 'BEGIN { exit !(d >= 2.0 && d < 3.0) }'; } ||
    fail "delay not Retry-After's plus jitter: $(cat "$T/err")"
  ok "waited $ms ms for Retry-After: 2"
  ;;
burst-500)
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/faults '{"status":500,"count":3,"method":"LIST"}'
  api POST /_control/stats/reset
  t0=$(date +%s%N)
  run_agent --timeout 20s w-0 echo survived
  ms=$(ms_since "$t0")
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
  ms=$(ms_since "$t0")
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = patient ] || fail "stdout"
  [ "$ms" -ge 1500 ] || fail "$ms ms: the delay did not apply"
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
  rejected=$(json_get - rejected <<< "$apf")
  in_flight=$(json_get - max_in_flight <<< "$apf")
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
  { [ "$(count_of LIST)" = 2 ] && [ "$(count_of WATCH)" = 2 ]; } || fail "expected 403 + 1 good LIST and WATCH each, got $(count_of LIST) + $(count_of WATCH)"
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
  grep -q 'forbidden: the service account cannot "list" "pods" in namespace "default" (grant list/watch on pods: see images/k8s/role.yaml)' "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 'pods \"w-0\" is forbidden\|pods is forbidden' "$T/err" || fail "server's reason missing: $(cat "$T/err")"
  [ "$(count_of LIST)" -ge 2 ] || fail "expected retries before failing, got $(count_of LIST) LIST(s)"
  api POST /_control/faults '{"clear":true}'
  ok "$(count_of LIST) tries: $(cat "$T/err")"
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
  [ "$(json_get "$T/body" details.kind)/$(json_get "$T/body" details.name)" = pods/w-0 ] ||
    fail "403 without details: $(cat "$T/body")"
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
