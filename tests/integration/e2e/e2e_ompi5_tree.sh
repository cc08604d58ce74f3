# shellcheck shell=bash disable=SC2016 # single-quoted snippets run inside the pods
# SPDX-License-Identifier: Apache-2.0
# Open MPI 5 (PRRTE) tree spawn in the bed, sourced by e2e.sh. Every pod runs in the cached Debian 13 root
# (tests/bed/ompi5_root.sh, as s13). PRRTE's defaults are tree spawn on and a radix of 64, so beyond 64 hosts
# the prteds on workers run the agent themselves, under sshd, without the pod's environment: these scenarios
# force that with a radix of 1 or 2 on 4 workers, and check that those agents found the API through the
# in-cluster files (kubernetes.default.svc + the service-account mount), that a late worker is waited for and
# a failing one ends the job at once, and that stdin reaches prted and is closed (a PRRTE change under review
# hands prted a key that way).

# Brings up N worker pods in the Debian 13 root. Sets OMPI5_ROOT, E2E_AGENT (the portable copy), HELLO5 (the
# MPI program built with the root's mpicc) and TREE_AGENT (a wrapper that logs each call, see below). Workers
# are not yet pods.
ompi5_begin() {
  local n="$1" rc out
  need_agent
  step "Debian 13 root with Open MPI 5: $(bash "$BED_SRC_DIR/ompi5_root.sh" path)"
  OMPI5_ROOT="$(bash "$BED_SRC_DIR/ompi5_root.sh" ensure)"
  rc=$?
  ((rc == 77)) && skip "no cached Debian 13 root and it cannot be built here (Debian mirror unreachable, or debootstrap missing: see the line above)"
  if ((rc != 0)) || [[ ! -d "$OMPI5_ROOT" ]]; then fail "building the Debian 13 root failed (exit $rc)"; fi
  bed_gc
  bed_up "$n" || fail "bed did not come up"
  export BED_CHROOT="$OMPI5_ROOT"
  step "bed ready: $BED_DIR net $(bed_cidr), $n workers, pods run in $OMPI5_ROOT"
  E2E_AGENT="$(bed_portable_agent "$E2E_AGENT")" || fail "cannot prepare k8s-agent for the Debian 13 root"
  cp "$BED_SRC_DIR/mpi_hello.c" "$BED_DIR/mpi_hello.c"
  HELLO5="$BED_DIR/mpi_hello.ompi5"
  out="$(bed_exec_launcher mpicc -O2 -o "$HELLO5" "$BED_DIR/mpi_hello.c" 2>&1)" || fail "the root's mpicc failed: $out"
  TREE_AGENT="$(make_tree_agent_wrapper)"
}

# The agent as PRRTE calls it, in any pod: logs one line per call to $BED_DIR/agent-calls.log,
#   agent-call from=<pod> parent=<parent's comm> k8s_env=<KUBERNETES_SERVICE_HOST or unset> <argv>
# then execs the agent with a trace.
make_tree_agent_wrapper() {
  local w="$BED_DIR/bin/tree-agent"
  mkdir -p "$BED_DIR/bin"
  cat >"$w" <<EOW
#!/bin/sh
echo "agent-call from=\$(cat /proc/sys/kernel/hostname) parent=\$(cat /proc/\$PPID/comm 2>/dev/null) k8s_env=\${KUBERNETES_SERVICE_HOST:-unset} \$*" >>$BED_DIR/agent-calls.log
exec $E2E_AGENT --trace $BED_DIR/trace.jsonl "\$@"
EOW
  chmod 755 "$w"
  printf '%s' "$w"
}

# Checks the agent calls of a tree-spawned job on hosts w-0..w-(N-1): each host launched exactly once, the
# first ones by prterun in the launcher, at least one by a prted on a worker, and every agent run on a worker
# had no KUBERNETES_SERVICE_HOST (sshd passes no pod environment) yet its host reached ssh_ready: it found
# the API through the in-cluster files.
expect_tree_calls() {
  local n="$1" h i from_worker
  for ((i = 0; i < n; i++)); do
    h="w-$i"
    [[ "$(grep -cE "^agent-call .* $h PRTE_PREFIX=" "$BED_DIR/agent-calls.log")" == 1 ]] ||
      fail "expected exactly one agent call for $h"
  done
  grep -qE '^agent-call from=launcher parent=prterun ' "$BED_DIR/agent-calls.log" ||
    fail "prterun in the launcher ran no agent"
  from_worker="$(grep -cE '^agent-call from=w-[0-9]+ parent=prted k8s_env=unset ' "$BED_DIR/agent-calls.log")"
  ((from_worker >= 1)) || fail "no agent run by a prted inside a worker pod (without pod environment)"
  if grep -E '^agent-call from=w-' "$BED_DIR/agent-calls.log" | grep -vqE ' parent=prted k8s_env=unset '; then
    fail "an agent on a worker was not run by prted, or saw KUBERNETES_SERVICE_HOST"
  fi
  step "agent calls (from->host): $(sed -E 's/^agent-call from=([^ ]+) .* (w-[0-9]+) PRTE_PREFIX=.*/\1->\2/' \
    "$BED_DIR/agent-calls.log" | tr '\n' ' ')($from_worker from workers)"
}

# Tree spawn among Open MPI 5 workers: radix 1 (a chain launcher -> w-0 -> w-1 -> w-2 -> w-3) and radix 2
# (launcher -> w-0, w-1, whose prteds launch w-2 and w-3), set with --prtemca, then radix 1 again set only
# by PRTE_MCA_plm_ssh_agent / PRTE_MCA_rml_base_radix. prterun forwards both spellings to the prteds; the
# agents there run under sshd with the service-account files only.
s18_openmpi5_tree_spawn() {
  ompi5_begin 4
  bed_all_ready || fail "workers not ready"
  local run radix hosts=w-0,w-1,w-2,w-3
  for run in r1 r2 env; do
    rm -f "$BED_DIR/trace.jsonl" "$BED_DIR/agent-calls.log"
    bed_api POST /_control/stats/reset >/dev/null || fail "control API"
    if [[ $run == env ]]; then
      # The environment spelling: prterun forwards PRTE_MCA_* to the prteds it starts.
      radix=1
      start_job "tree-$run" env PRTE_MCA_plm_ssh_agent="$TREE_AGENT" PRTE_MCA_rml_base_radix=1 \
        mpirun --allow-run-as-root -H "$hosts" -np 4 "$HELLO5"
    else
      radix="${run#r}"
      start_job "tree-$run" mpirun --allow-run-as-root --prtemca plm_ssh_agent "$TREE_AGENT" \
        --prtemca rml_base_radix "$radix" -H "$hosts" -np 4 "$HELLO5"
    fi
    wait_job 90
    expect_rc 0
    expect_ranks 4
    expect_rank_hosts 1 w-0 w-1 w-2 w-3
    expect_tree_calls 4
    if ((radix == 1)); then
      # A chain: each worker's prted launched the next one.
      for i in 0 1 2; do
        grep -qE "^agent-call from=w-$i parent=prted .* w-$((i + 1)) PRTE_PREFIX=" "$BED_DIR/agent-calls.log" ||
          fail "radix 1: w-$((i + 1)) was not launched from w-$i"
      done
    else
      # prterun launches its two children itself; the other two hosts come from workers' prteds.
      [[ "$(grep -cE '^agent-call from=launcher .* w-[01] PRTE_PREFIX=' "$BED_DIR/agent-calls.log")" == 2 ]] ||
        fail "radix 2: prterun did not launch w-0 and w-1 itself"
      [[ "$(grep -cE '^agent-call from=w-[01] parent=prted .* w-[23] PRTE_PREFIX=' "$BED_DIR/agent-calls.log")" == 2 ]] ||
        fail "radix 2: w-2 and w-3 were not launched by the prteds on w-0/w-1"
    fi
    expect_trace_path w-0 w-1 w-2 w-3
    # The API saw one lookup per host (every pod was ready), including those the workers' agents asked for.
    api_expect_gets 1 w-0 w-1 w-2 w-3
    show_timeline
    expect_no_leftovers 10
  done
  pass
}

# API lookups on the fake API server: every HOST cost EXPECT requests (its
# name-selected LIST; a GET where a client still asks by name) and none was
# watched. The server counts LISTs per path, not per pod, so the sum is what
# can be checked.
api_expect_gets() {
  local expect="$1" stats got
  shift
  stats="$(bed_api GET /_control/stats)" || fail "control API stats"
  got="$("$BED_PY" -c 'import json, sys
r = json.loads(sys.argv[1])["requests"]
pods = "/api/v1/namespaces/default/pods"
print(sum(v for k, v in r.items() if k.startswith("LIST " + pods) or k.startswith("GET " + pods + "/")))' "$stats")"
  [[ "$got" == "$((expect * $#))" ]] || fail "API lookups for $*: $got, expected $((expect * $#)) ($stats)"
  [[ "$stats" != *'"WATCH '* ]] || fail "a ready host was watched ($stats)"
}

# No tree spawn in Open MPI 5: prterun runs every agent, prted --daemonize detaches, each agent exits 0 as
# soon as its prted did; nothing runs the agent on a worker.
s19_openmpi5_no_tree_spawn() {
  ompi5_begin 4
  bed_all_ready || fail "workers not ready"
  local h
  start_job notree mpirun --allow-run-as-root --prtemca plm_ssh_agent "$TREE_AGENT" \
    --prtemca plm_ssh_no_tree_spawn 1 -H w-0,w-1,w-2,w-3 -np 4 "$HELLO5"
  wait_job 90
  expect_rc 0
  expect_ranks 4
  expect_rank_hosts 1 w-0 w-1 w-2 w-3
  [[ "$(grep -cE '^agent-call from=launcher parent=prterun .* --daemonize' "$BED_DIR/agent-calls.log")" == 4 ]] ||
    fail "expected 4 agent calls from prterun, each with prted --daemonize"
  grep -qE '^agent-call from=w-' "$BED_DIR/agent-calls.log" && fail "an agent ran on a worker without tree spawn"
  for h in w-0 w-1 w-2 w-3; do expect_trace order "$h" resolved pod_running ssh_ready started exited; done
  show_timeline
  expect_no_leftovers 10
  pass
}

# One worker late and one failing, over 4 workers: w-2 is Pending when the job starts and becomes ready
# ~1.5 s later, w-3 is Pending and goes Failed (Evicted) once its agent waits on it. Either way prterun must
# end with an error soon after, never hang, and the agent's reason must be where it can be:
#  (a) tree spawn, radix 1 (launcher -> w-0 -> w-1 -> w-2 -> w-3): w-3's agent runs under the prted on w-2.
#      PRRTE points a tree-spawned prted's stdout and stderr at /dev/null (seen in /proc/PID/fd), and its
#      children inherit that; each agent that launched a prted kept its session's stderr open in it, so the
#      agent at level 4 writes its reason there and every level relays it: the line reaches prterun's
#      output, naming the level and the pod whose prted ran it.
#  (b) no tree spawn: prterun runs w-3's agent itself, and the agent's one line reaches prterun's output.
s20_openmpi5_late_and_failing() {
  ompi5_begin 4
  local i
  for i in 0 1; do bed_sshd_spawn "w-$i" || fail "sshd w-$i"; done
  for i in 0 1; do bed_sshd_wait "w-$i" || fail "sshd w-$i"; bed_worker_phase "w-$i" Running || fail "control API"; done
  bed_worker_phase w-2 Pending || fail "control API"
  bed_worker_phase w-3 Pending || fail "control API"
  late_and_failing_run tree --prtemca rml_base_radix 1
  expect_output 'Remote daemon: .* on node w-3'
  grep -qE '^agent-call from=w-2 parent=prted .* w-3 PRTE_PREFIX=' "$BED_DIR/agent-calls.log" ||
    fail "w-3's agent was not run by the prted on w-2"
  expect_output '^k8s-agent \(tree level 4, on w-2\): w-3: .*Evicted'
  # The same faults again, every agent run by prterun.
  bed_sshd_stop w-2
  bed_worker_phase w-2 Pending || fail "control API"
  bed_pod_set w-3 '{"phase":"Pending","podIP":null,"reason":null,"message":null}' || fail "control API"
  late_and_failing_run notree --prtemca plm_ssh_no_tree_spawn 1
  expect_output 'k8s-agent: w-3: .*Evicted'
  pass
}

# One run of s20: TAG, then extra mpirun arguments. w-2 and w-3 must be Pending.
late_and_failing_run() {
  local tag="$1" fail_us after_ms
  shift
  rm -f "$BED_DIR/trace.jsonl" "$BED_DIR/agent-calls.log"
  start_job "late-fail-$tag" mpirun --allow-run-as-root --prtemca plm_ssh_agent "$TREE_AGENT" "$@" \
    -H w-0,w-1,w-2,w-3 -np 4 "$HELLO5"
  at_ms 1500
  step "w-2 ready (sshd + Running)"
  bed_worker_ready w-2 || fail "w-2 not ready"
  # w-3 fails only once its agent waits on it (the failure is seen mid-wait) and w-2's agent has started
  # its prted (without tree spawn the two agents run side by side, and the abort would cut w-2 short).
  wait_trace_event w-3 resolved 60
  wait_trace_event w-2 started 60
  step "w-3 Failed: Evicted"
  bed_pod_set w-3 '{"phase":"Failed","podIP":null,"reason":"Evicted","message":"The node was low on resource: memory."}' ||
    fail "control API"
  fail_us="$(now_us)"
  wait_job 60
  expect_rc_nonzero
  after_ms=$((JOB_MS - (fail_us - JOB_T0_US) / 1000))
  step "[$tag] prterun ended (exit $JOB_RC) ${after_ms} ms after w-3 failed"
  expect_trace order w-2 resolved pod_running ssh_ready started
  expect_trace after w-2 ssh_ready "$JOB_T0_US" 1400
  expect_trace grep w-3 failed Evicted
  show_timeline
  expect_no_leftovers 15
}

# Waits until the trace has EVENT for HOST, up to SECONDS (the job must still run).
wait_trace_event() {
  local host="$1" event="$2" limit_s="$3" deadline
  deadline=$(($(now_ms) + limit_s * 1000))
  until trace order "$host" "$event" >/dev/null 2>&1; do
    (($(now_ms) > deadline)) && fail "no $event for $host in the trace after ${limit_s}s"
    kill -0 "$JOB_PID" 2>/dev/null || fail "job exited before $host reached $event"
    sleep 0.05
  done
}

# stdin through the agent to prted, as the PRRTE change under review will use it: a launch-agent wrapper
# writes a per-host key and then closes its end (EOF) into the agent's stdin, and prted is started through
# prte_launch_agent as a script that reads its stdin to EOF (`cat`), records the key, and only then execs
# prted. If the agent dropped stdin or never sent EOF, that script would wait forever and the job would
# hang (wait_job fails it). Tree spawn with radix 1, so the prteds on workers feed their children's agents
# the same way.
s21_openmpi5_stdin_key() {
  ompi5_begin 3
  bed_all_ready || fail "workers not ready"
  local w="$BED_DIR/bin/key-agent" p="$BED_DIR/bin/prted-keyed" h
  cat >"$w" <<EOW
#!/bin/sh
for a in "\$@"; do case "\$a" in w-*) host="\$a" && break ;; esac; done
echo "agent-call from=\$(cat /proc/sys/kernel/hostname) parent=\$(cat /proc/\$PPID/comm 2>/dev/null) host=\$host" >>$BED_DIR/agent-calls.log
# The key, then EOF: the pipe's writer exits as soon as it has written.
printf 'dvm-key-for-%s-%s\n' "\$host" "\$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')" |
  $E2E_AGENT --trace $BED_DIR/trace.jsonl "\$@"
EOW
  cat >"$p" <<EOW
#!/bin/sh
key="\$(cat)"
echo "prted-key on=\$(cat /proc/sys/kernel/hostname) key=\$key" >>$BED_DIR/keys.log
exec /usr/bin/prted "\$@"
EOW
  chmod 755 "$w" "$p"
  start_job stdin-key mpirun --allow-run-as-root --prtemca plm_ssh_agent "$w" --prtemca prte_launch_agent "$p" \
    --prtemca rml_base_radix 1 -H w-0,w-1,w-2 -np 3 "$HELLO5"
  wait_job 90
  expect_rc 0
  expect_ranks 3
  expect_rank_hosts 1 w-0 w-1 w-2
  for h in w-0 w-1 w-2; do
    grep -qE "^prted-key on=$h key=dvm-key-for-$h-[0-9a-f]{16}$" "$BED_DIR/keys.log" ||
      fail "prted on $h did not read its key to EOF: $(cat "$BED_DIR/keys.log" 2>/dev/null)"
  done
  grep -qE '^agent-call from=w-[0-9] parent=' "$BED_DIR/agent-calls.log" || fail "no agent run by a prted on a worker"
  step "keys read to EOF by prted: $(wc -l <"$BED_DIR/keys.log") ($(grep -c 'from=w-' "$BED_DIR/agent-calls.log") fed by workers' prteds)"
  expect_no_leftovers 10
  pass
}

# Open MPI 5 with more hosts than the radix, the agent's settings passed as operators pass them: 12 workers at
# radix 4, so prterun starts w-0..w-3 and their prteds the other eight (a second level of agents, in sshd
# sessions without the pods' environment). Every setting is a "-o Key=Value" in plm_ssh_args, first as
# Kubeflow Trainer's PRTE_MCA_plm_ssh_args, then as mpi-operator's OMPI_MCA_plm_rsh_args="-o
# ConnectionAttempts=10" translated by images/ompi-env.sh. PRRTE 3.0 hands those values to the prteds cut at
# their first '=' (the workers' agents are called with "-o UserKnownHostsFile HOST ..."): they complete them
# from the settings the agent that launched their prted exported (K8S_AGENT_TREE), and log that at -vv.
s27_openmpi5_tree_args() {
  ompi5_begin 12
  bed_all_ready || fail "workers not ready"
  local run opts hosts n=12 cut from_workers
  hosts="$(seq -s, -f 'w-%g' 0 $((n - 1)))"
  opts="$(cat "$BED_DIR/ssh/agent_opts") -o ConnectionAttempts=10"
  cp "$BED_REPO_DIR/images/ompi-env.sh" "$BED_DIR/ompi-env.sh"
  for run in trainer operator; do
    rm -f "$BED_DIR/trace.jsonl" "$BED_DIR/agent-calls.log"
    bed_api POST /_control/stats/reset >/dev/null || fail "control API"
    if [[ $run == trainer ]]; then
      start_job "args-$run" env PRTE_MCA_plm_ssh_agent="$TREE_AGENT" PRTE_MCA_plm_ssh_args="$opts" \
        PRTE_MCA_rml_base_radix=4 mpirun --allow-run-as-root -H "$hosts" -np "$n" "$HELLO5"
    else
      start_job "args-$run" env -u PRTE_MCA_plm_ssh_agent OMPI_MCA_plm_rsh_agent="$TREE_AGENT" \
        OMPI_MCA_plm_rsh_args="-o ConnectionAttempts=10 $(cat "$BED_DIR/ssh/agent_opts")" \
        sh -c '. "$1"; shift; exec mpirun --allow-run-as-root --prtemca rml_base_radix 4 "$@"' sh \
        "$BED_DIR/ompi-env.sh" -H "$hosts" -np "$n" "$HELLO5"
    fi
    wait_job 120
    expect_rc 0
    expect_ranks "$n"
    # shellcheck disable=SC2046 # one word per host
    expect_rank_hosts 1 $(seq -f 'w-%g' 0 $((n - 1)))
    expect_tree_calls "$n"
    from_workers="$(grep -cE '^agent-call from=w-[0-3] parent=prted ' "$BED_DIR/agent-calls.log")"
    [[ "$from_workers" == 8 ]] || fail "[$run] expected 8 agents run by the prteds on w-0..w-3, got $from_workers"
    # PRRTE's cut, seen in the workers' calls: the value ends at its first '='.
    cut="$(grep -cE '^agent-call from=w-[0-3] .* -o (UserKnownHostsFile|ConnectionAttempts) w-[0-9]+ ' \
      "$BED_DIR/agent-calls.log")"
    [[ "$cut" == 8 ]] || fail "[$run] expected PRRTE's '=' cut in the 8 workers' calls, got $cut: $(grep 'from=w-' \
      "$BED_DIR/agent-calls.log" | head -2)"
    # shellcheck disable=SC2046
    expect_trace_path $(seq -f 'w-%g' 0 $((n - 1)))
    api_expect_gets 1 $(seq -f 'w-%g' 0 $((n - 1)))
    step "[$run] 12 ranks over two levels of agents; the workers' 8 completed PRRTE's cut arguments"
    expect_no_leftovers 10
  done
  pass
}
