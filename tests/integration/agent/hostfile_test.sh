#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --hostfile: selection, order, slots, --ssh-ready and --wait-for-count.
# The k8s-agent binary against the fake API server (real TLS) and a real
# sshd on loopback, with agent_lib.sh's setup. Each scenario is one ctest
# test (agent.SCENARIO):
#   hostfile_test.sh AGENT_BINARY SCENARIO
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

case "$SCENARIO" in
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
  { [ $RC -eq 0 ] && [ ! -s "$T/out" ]; } || fail "empty selection: rc $RC, $(cat "$T/out")"
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
*)
  fail "unknown scenario"
  ;;
esac
