#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Pods as current clusters run them: native sidecars (init containers with
# restartPolicy Always, GA in Kubernetes 1.33) and overlapping replacements
# (a Job's new pod beside its terminating one: podReplacementPolicy
# TerminatingOrFailed, the 1.34 default, and the 1.20 Job controller).
# The k8s-agent binary against the fake API server (real TLS) and a real
# sshd on loopback, with agent_lib.sh's setup. Each scenario is one ctest
# test (agent.SCENARIO):
#   current_pods_test.sh AGENT_BINARY SCENARIO
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

# Index 0 of the Indexed Job "job", labelled as the Job controller does.
J='"hostname":"job-0","subdomain":"job","owner":"Job/job","labels":{"batch.kubernetes.io/job-name":"job","batch.kubernetes.io/job-completion-index":"0"}'
JOB_HOST=job-0.job.default.svc.cluster.local
# A pod with a hostname of no controller's grammar: found by a namespace
# LIST for spec.hostname (an operator's workers, a Job's template hostname).
T_POD='"hostname":"trainer","owner":"Job/train"'
printf '[trainer]:%s %s\n' "$SSH_PORT" "$hostkey" >> "$T/ssh/known_hosts"

case "$SCENARIO" in
native-sidecar-crashloop)
  # A Running pod whose native sidecar crash-loops (it started once, so the
  # pod is Initialized and main runs) while sshd answers: launched, as for a
  # classic sidecar, and -v says despite what.
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1","owner":"StatefulSet/w","initContainers":[{"name":"log-shipper","restartPolicy":"Always","state":"CrashLoopBackOff","started":false}]}'
  run_agent -v --timeout 20s w-0 echo launched
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = launched ] || fail "stdout: $(cat "$T/out")"
  grep -q 'launching although sidecar container log-shipper is waiting: CrashLoopBackOff: ssh answers' "$T/err" || fail "-v does not say why: $(cat "$T/err")"
  trace_has ssh_ready
  ok "launched beside the crash-looping sidecar log-shipper"
  ;;
native-sidecar-pending)
  # A running sidecar is no unfinished init container: while a regular
  # init container runs, the wait names it (not the sidecar); once it has
  # Completed, the wait is on the main container, then the launch.
  start_sshd
  S='{"name":"log-shipper","restartPolicy":"Always","state":"Running"}'
  pod w-0 "{\"phase\":\"Pending\",\"owner\":\"StatefulSet/w\",\"waitingReason\":\"PodInitializing\",\"initContainers\":[$S,{\"name\":\"setup\",\"state\":\"Running\"}]}"
  run_agent_bg -vv --timeout 20s w-0 echo launched
  wait_watching 1
  pod w-0 "{\"waitingReason\":\"ContainerCreating\",\"initContainers\":[$S,{\"name\":\"setup\",\"state\":\"Completed\"}]}"
  creating() { grep -q 'pod default/w-0: Pending: ContainerCreating$' "$T/err"; }
  wait_for 10 creating || fail "wait not on the main container: $(cat "$T/err")"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1","waitingReason":null}'
  wait_agent 15
  [ $RC -eq 0 ] || fail "rc $RC"
  grep -q 'pod default/w-0: Pending: PodInitializing (init container setup not finished)$' "$T/err" || fail "the running init container not named: $(cat "$T/err")"
  grep -q 'log-shipper not finished' "$T/err" && fail "the running sidecar named as unfinished: $(cat "$T/err")"
  ok "named init container setup, not the running sidecar, then launched"
  ;;
init-container-failed)
  # A regular init container in CrashLoopBackOff: the pod never runs the
  # main containers, so the agent fails at once naming it, even with an
  # sshd that answers and a 60 s --timeout.
  start_sshd
  pod w-0 '{"phase":"Pending","owner":"StatefulSet/w","waitingReason":"PodInitializing","initContainers":[{"name":"fetch-data","state":"CrashLoopBackOff"},{"name":"log-shipper","restartPolicy":"Always","state":"Running"}]}'
  t0=$(date +%s%N)
  run_agent --timeout 60s w-0 true
  ms=$(ms_since "$t0")
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'pod default/w-0 is Pending: init container fetch-data is waiting: CrashLoopBackOff: .*; it last exited with code 1 (Error)' "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 'timed out' "$T/err" && fail "waited for the timeout: $(cat "$T/err")"
  [ "$ms" -lt 10000 ] || fail "took $ms ms"
  ok "$ms ms: $(cat "$T/err")"
  ;;
replacement-beside-terminating)
  # The pod HOST resolves to by spec.hostname is terminating (still
  # Running, sshd still answering on its IP) when the agent starts; its
  # replacement comes once the agent is waiting. The agent never launches
  # on the dying pod and takes the replacement, and -v names both.
  start_sshd
  pod train-0-old "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$T_POD}"
  api DELETE '/_control/pods/default/train-0-old?grace=600'
  run_agent_bg -v --timeout 30s trainer echo on-replacement
  waiting() { grep -q 'pod default/train-0-old is terminating' "$T/err"; }
  wait_for 20 waiting || fail "the agent does not say it waits: $(cat "$T/err")"
  grep -q '"ssh_ready"' "$T/trace.jsonl" && fail "launched on the terminating pod"
  pod train-0-new "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$T_POD}"
  wait_agent 20
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = on-replacement ] || fail "stdout: $(cat "$T/out")"
  grep -q '"event":"ssh_ready".*"pod":"train-0-new"\|"pod":"train-0-new".*"event":"ssh_ready"' "$T/trace.jsonl" || fail "ssh_ready not on train-0-new: $(cat "$T/trace.jsonl")"
  grep -q 'using pod train-0-new; passing over pod train-0-old' "$T/err" || fail "-v does not name both pods: $(cat "$T/err")"
  ok "ran on train-0-new, never on the terminating train-0-old"
  ;;
job-replacement-beside-terminating)
  # The same for an Indexed Job's index: the followed pod is deleted while
  # the agent probes it (sshd not up yet), and the Job controller creates
  # the replacement at once, beside it. The labelled watch shows both.
  pod job-0-old "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$J}"
  run_agent_bg -v --timeout 30s "$JOB_HOST" echo on-replacement
  probing() { grep -q "\"pod_running\"" "$T/trace.jsonl" 2>/dev/null; }
  wait_for 20 probing || fail "never probed: $(cat "$T/err")"
  api POST '/_control/replace/default/job-0-old?as=job-0-new' '{"phase":"Pending"}'
  waiting() { grep -q 'pod default/job-0-old is terminating' "$T/err"; }
  wait_for 20 waiting || fail "the agent does not say the pod is terminating: $(cat "$T/err")"
  start_sshd
  grep -q '"ssh_ready"' "$T/trace.jsonl" && fail "launched on the terminating pod"
  pod job-0-new "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\"}"
  wait_agent 20
  [ $RC -eq 0 ] || fail "rc $RC: $(cat "$T/err")"
  [ "$(cat "$T/out")" = on-replacement ] || fail "stdout: $(cat "$T/out")"
  grep '"event":"ssh_ready"' "$T/trace.jsonl" | grep -q '"pod":"job-0-new"' || fail "ssh_ready not on job-0-new: $(cat "$T/trace.jsonl")"
  ok "ran on job-0-new after job-0-old began terminating"
  ;;
terminating-no-replacement)
  # Only a terminating pod has the hostname and no replacement comes: the
  # agent waits (it says so at -v), and the timeout names the pod.
  start_sshd
  pod train-0-old "{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\",$T_POD}"
  api DELETE '/_control/pods/default/train-0-old?grace=600'
  run_agent -v --timeout 3s trainer true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'trainer: pod default/train-0-old is terminating' "$T/err" || fail "no line about the wait: $(cat "$T/err")"
  grep -q 'timed out after 3.0s waiting for pod default/train-0-old: terminating' "$T/err" || fail "timeout message: $(cat "$T/err")"
  grep -q '"ssh_ready"' "$T/trace.jsonl" && fail "launched on the terminating pod"
  ok "$(grep 'timed out' "$T/err")"
  ;;
*)
  fail "unknown scenario"
  ;;
esac
