#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Finding the pod and waiting for it: the lookup (by name and by
# spec.hostname), Pending to Running, sshd not yet up, --wait-only,
# deletions and replacements, and the pod timeline in --trace.
# The k8s-agent binary against the fake API server (real TLS) and a real
# sshd on loopback, with agent_lib.sh's setup. Each scenario is one ctest
# test (agent.SCENARIO):
#   lookup_test.sh AGENT_BINARY SCENARIO
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

case "$SCENARIO" in
ready)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/stats/reset
  start_sshd
  # shellcheck disable=SC2016 # expanded by the remote shell
  run_agent w-0 echo hello '"$((6*7))"' "'a;b'"
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = "hello 42 a;b" ] || fail "stdout: $(cat "$T/out")"
  [ "$(requests)" = 1 ] || fail "expected 1 API request for a ready pod, got $(requests)"
  [ "$(stat_of quorum_lists)" = 0 ] || fail "the lookup was a quorum read"
  for e in resolved pod_running ssh_ready started exited; do trace_has $e; done
  ok "one cached LIST, command ran through the remote shell"
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
  [ "$(stat_of quorum_lists)" = 0 ] || fail "$(stat_of quorum_lists) quorum LIST(s)"
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
  ms=$(ms_since "$t0")
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
hostname)
  start_sshd
  # An Indexed Job's pod, labelled as the Job controller (1.28+) does: the
  # name lookup, then one watch of the pods labelled for job 0; no LIST of
  # the namespace.
  pod job-0-x7k2p '{"phase":"Running","podIP":"127.0.0.1","hostname":"job-0","subdomain":"job","owner":"Job/job","labels":{"batch.kubernetes.io/job-name":"job","batch.kubernetes.io/job-completion-index":"0"}}'
  pod other-1-abcde '{"phase":"Running","podIP":"127.0.0.1","hostname":"other-1","labels":{"batch.kubernetes.io/job-name":"other","batch.kubernetes.io/job-completion-index":"1"}}'
  api POST /_control/stats/reset
  run_agent job-0.job.default.svc.cluster.local echo via-hostname
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = via-hostname ] || fail "stdout"
  [ "$(count_of LIST)" -eq 1 ] || fail "$(count_of LIST) LISTs (want the name lookup only)"
  [ "$(count_of WATCH)" -eq 1 ] || fail "$(count_of WATCH) WATCHes (want the labelled one only)"
  ok "spec.hostname resolved to job-0-x7k2p with 1 LIST and 1 WATCH"
  ;;
hostname-unlabelled)
  # A hand-written pod with hostname node-1 (a Job's grammar) and no Job
  # labels: the labelled watch answers with nothing, and the namespace LIST
  # that comes a second later finds it, well within a 5 s --timeout.
  start_sshd
  pod mpi-node-1 '{"phase":"Running","podIP":"127.0.0.1","hostname":"node-1"}'
  api POST /_control/stats/reset
  run_agent --timeout 5s node-1 echo unlabelled
  [ $RC -eq 0 ] || fail "rc $RC: $(cat "$T/err")"
  [ "$(cat "$T/out")" = unlabelled ] || fail "stdout: $(cat "$T/out")"
  [ "$(count_of LIST)" -eq 2 ] || fail "$(count_of LIST) LISTs (want the name lookup and one namespace LIST)"
  ok "node-1 resolved to the unlabelled mpi-node-1 with $(count_of LIST) LISTs"
  ;;
job-pod-late)
  # The agent starts before the Job has made the pod (the launcher first):
  # the labelled watch sees it come. If that takes over a second, a name
  # watch (HOST may be a StatefulSet's pod name) and one namespace LIST (a
  # pod without the labels) have joined it; how fast the pod is made here
  # decides, so up to 2 of each.
  start_sshd
  J='"hostname":"job-0","subdomain":"job","owner":"Job/job","labels":{"batch.kubernetes.io/job-name":"job","batch.kubernetes.io/job-completion-index":"0"}'
  api POST /_control/stats/reset
  run_agent_bg --timeout 30s job-0.job.default.svc.cluster.local echo late
  wait_watching 1
  pod job-0-x7k2p "{\"phase\":\"Pending\",$J}"
  pod job-0-x7k2p "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$J}"
  wait_agent 20
  [ $RC -eq 0 ] || fail "rc $RC: $(cat "$T/err")"
  [ "$(cat "$T/out")" = late ] || fail "stdout: $(cat "$T/out")"
  [ "$(count_of LIST)" -le 2 ] || fail "$(count_of LIST) LISTs (want the name lookup, at most one more)"
  [ "$(count_of WATCH)" -le 2 ] || fail "$(count_of WATCH) WATCHes"
  ok "found job-0-x7k2p created after the agent started: $(count_of LIST) LIST(s), $(count_of WATCH) WATCH(es)"
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
stale-version)
  # The pod has not changed for longer than the watch history holds (the
  # real cache keeps ~75 s and starts empty after a restart): its own RV
  # is too old to watch from. Expect the cached LIST + one WATCH from the
  # list's version, no 410 and no quorum LIST.
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
  [ "$(stat_of expired_watches)" = 0 ] || fail "a watch got 410 (watched from the pod's own stale RV)"
  [ "$(stat_of quorum_lists)" = 0 ] || fail "$(stat_of quorum_lists) quorum LIST(s)"
  [ "$(requests)" = 2 ] || fail "expected LIST+WATCH = 2 requests, got $(requests)"
  ok "2 requests, no 410, no quorum read"
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
  J='"hostname":"job-0","subdomain":"job","owner":"Job/job","labels":{"batch.kubernetes.io/job-name":"job","batch.kubernetes.io/job-completion-index":"0"}'
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
  J='"hostname":"job-0","subdomain":"job","owner":"Job/job","labels":{"batch.kubernetes.io/job-name":"job","batch.kubernetes.io/job-completion-index":"0"}'
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
  # index, so the agent keeps watching the index's pods and uses the new
  # one, with no LIST after the name lookup.
  start_sshd
  J='"hostname":"job-0","subdomain":"job","owner":"Job/job","labels":{"batch.kubernetes.io/job-name":"job","batch.kubernetes.io/job-completion-index":"0"}'
  pod job-0-x7k2p "{\"phase\":\"Failed\",$J}"
  api POST /_control/stats/reset
  run_agent_bg -v --timeout 30s job-0.job.default.svc.cluster.local echo retried
  waiting_for_retry() { grep -q "waiting up to 30.0s for Job/job to replace it" "$T/err"; }
  wait_for 20 waiting_for_retry || fail "the agent does not say it waits for the retry: $(cat "$T/err")"
  kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent gave up on the Failed Job pod"
  pod job-0-q9z4m "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$J}"
  wait_agent 20
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = retried ] || fail "stdout: $(cat "$T/out")"
  [ "$(count_of LIST)" -eq 1 ] || fail "$(count_of LIST) LISTs"
  ok "waited for job-0's retry with $(count_of LIST) LIST and $(count_of WATCH) WATCH(es)"
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
shared-list)
  # --lookup-cache: agents started together, as mpirun starts them, list
  # the namespace once between them; each one that waited past the
  # patience for the lister says so at -v and asks for its own pod, so the
  # count below holds however loaded the machine is.
  n=8
  for i in $(seq 0 $((n - 1))); do pod "w-$i" '{"phase":"Running","podIP":"127.0.0.1"}'; done
  pod w-9 '{"phase":"Running","podIP":"127.0.0.3"}'
  for i in 3 4 5 6 7 9; do printf '[w-%s]:%s %s\n' "$i" "$SSH_PORT" "$hostkey" >> "$T/ssh/known_hosts"; done
  start_sshd
  api POST /_control/stats/reset
  export XDG_CACHE_HOME="$T/cache"
  pids=()
  for i in $(seq 0 $((n - 1))); do
    "$AGENT" "${SSH_ARGS[@]}" -v --lookup-cache 5s "w-$i" echo "on-$i" > "$T/out.$i" 2> "$T/err.$i" &
    pids+=($!)
  done
  for i in $(seq 0 $((n - 1))); do
    wait "${pids[$i]}" || fail "agent w-$i: rc $? ($(tail -3 "$T/err.$i"))"
    [ "$(cat "$T/out.$i")" = "on-$i" ] || fail "agent w-$i printed $(cat "$T/out.$i")"
  done
  answered=$(cat "$T"/err.* | grep -c 'answered from the namespace.s pod list')
  unshared=$(cat "$T"/err.* | grep -c 'looking up unshared')
  [ "$answered" -ge 1 ] || fail "no agent was answered from the shared list"
  # The lister is answered from its own list too.
  [ $((answered + unshared)) = "$n" ] || fail "$answered answered + $unshared unshared of $n"
  [ "$(requests)" = $((1 + unshared)) ] || fail "expected $((1 + unshared)) API requests, got $(requests)"
  # One more agent within the list's age asks the API server nothing.
  api POST /_control/stats/reset
  run_agent --lookup-cache 60s w-3 true
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(requests)" = 0 ] || fail "a lookup within the list's age made $(requests) request(s)"
  # The user's own directory and files, and nothing of the credential.
  dir=$(find "$T/cache/k8s-agent/pods" -mindepth 1 -maxdepth 1 -type d)
  [ "$(stat -c %a "$dir")" = 700 ] || fail "$dir is $(stat -c %a "$dir")"
  [ -z "$(find "$dir" -type f ! -perm 600)" ] || fail "files not 0600: $(find "$dir" -type f ! -perm 600)"
  ! grep -rqF "$(cat "$T/api/token")" "$T/cache" || fail "the token is in the shared list"
  # A pod that moved within the age (w-9 was listed at 127.0.0.3, where
  # nothing listens): the agent is refused at the listed address, then
  # follows the pod from the list's version and finds it where it is now.
  pod w-9 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/stats/reset
  run_agent --lookup-cache 60s w-9 echo moved
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = moved ] || fail "stdout: $(cat "$T/out")"
  [ "$(count_of WATCH)" = 1 ] || fail "expected the one watch from the list's version: $(requests) request(s)"
  [ "$(requests)" = 1 ] || fail "expected 1 API request (the watch), got $(requests)"
  # A HOME the cache cannot be made in (a read-only root's): the list goes
  # to a private directory under TMPDIR instead, and is shared from there.
  : >"$T/home-file"
  mkdir -m 1777 "$T/tmp"
  api POST /_control/stats/reset
  unset XDG_CACHE_HOME
  home="$HOME"
  export HOME="$T/home-file" TMPDIR="$T/tmp"
  run_agent --lookup-cache 60s w-4 true
  [ $RC -eq 0 ] || fail "read-only HOME, lister: rc $RC ($(tail -3 "$T/err"))"
  [ "$(requests)" = 1 ] || fail "read-only HOME, lister: expected 1 API request (the list), got $(requests)"
  api POST /_control/stats/reset
  run_agent --lookup-cache 60s w-5 true
  [ $RC -eq 0 ] || fail "read-only HOME, second agent: rc $RC"
  [ "$(requests)" = 0 ] || fail "read-only HOME: the second agent made $(requests) request(s)"
  export HOME="$home"
  unset TMPDIR
  tmp_dir="$T/tmp/k8s-agent-$(id -u)-pods"
  [ "$(stat -c %a "$tmp_dir" 2>/dev/null)" = 700 ] || fail "no private $tmp_dir: $(ls -la "$T/tmp")"
  ok "$n agents: 1 + $unshared API requests, $answered answered from the shared list;" \
    "a read-only HOME shares through $tmp_dir"
  ;;
*)
  fail "unknown scenario"
  ;;
esac
