# shellcheck shell=bash disable=SC2016
# SPDX-License-Identifier: Apache-2.0
# Helpers for the e2e scenarios: run mpirun in the launcher pod, schedule pod changes, assert outcomes.
# Sourced by e2e.sh. Every assertion prints "FAIL [e2e <scenario>]: <why>" plus the evidence and exits 1
# (fail and skip: tests/lib/testlib.sh); success prints "E2E PASS <scenario>". Progress lines are
# "[e2e <scenario> +<ms>] ...".

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../bed/bed.sh
. "$E2E_DIR/../../bed/bed.sh"
# shellcheck source=../../lib/testlib.sh
. "$E2E_DIR/../../lib/testlib.sh"
TRACE_TOOL="$BED_SRC_DIR/trace_tool.py"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
now_us() { echo $(($(date +%s%N) / 1000)); }
E2E_T0_MS="$(now_ms)"
E2E_NAME="${E2E_NAME:-?}"
TEST_TAG="e2e $E2E_NAME"

step() { printf '[e2e %s +%dms] %s\n' "$E2E_NAME" $(($(now_ms) - E2E_T0_MS)) "$*"; }

# Prints the evidence for a failure: mpirun output, trace, agent-call log, sshd/apiserver log tails.
e2e_evidence() {
  local f
  [[ -n "${BED_DIR:-}" && -d "$BED_DIR" ]] || return 0
  for f in "$BED_DIR"/out-*.txt; do
    [[ -f "$f" ]] && { echo "----- $(basename "$f")"; tail -n 60 "$f"; }
  done
  if [[ -f "$BED_DIR/trace.jsonl" ]]; then
    echo "----- trace.jsonl"
    "$BED_PY" "$TRACE_TOOL" dump "$BED_DIR/trace.jsonl" | tail -n 80
  fi
  [[ -f "$BED_DIR/agent-calls.log" ]] && { echo "----- agent-calls.log"; cut -c1-200 "$BED_DIR/agent-calls.log"; }
  for f in "$BED_DIR"/log/apiserver.out "$BED_DIR"/log/sshd-*.log; do
    [[ -s "$f" ]] && { echo "----- $(basename "$f") (tail)"; tail -n 8 "$f"; }
  done
  # Why an sshd refused a login (an auth failure's reason is only in the server's log, and the tail above
  # may have scrolled past it): sshd's refusal lines, whatever its LogLevel.
  for f in "$BED_DIR"/log/sshd-*.log; do
    [[ -s "$f" ]] || continue
    grep -E 'Invalid user|refused|not allowed|[Bb]ad ownership|Failed publickey|Could not open|[Aa]uthorized ?keys|Connection closed by authenticating|userauth_pubkey|key not found|Accepted publickey|fatal|error' \
      "$f" | tail -n 20 | sed "s|^|$(basename "$f" .log): |"
  done
  echo "----- processes left in the bed's pods"
  bed_leftovers
  return 0
}

# fail's evidence.
on_fail() { e2e_evidence; }
pass() {
  echo "E2E PASS $E2E_NAME ($(($(now_ms) - E2E_T0_MS)) ms)"
  exit 0
}

# The agent string for plm_rsh_agent. E2E_AGENT is the k8s-agent path, or "ssh" to validate the bed with
# plain OpenSSH (its config maps pod names to IPs, so it cannot wait for pods).
agent_string() {
  if [[ "$E2E_AGENT" == ssh ]]; then
    printf 'ssh -F %s' "$BED_DIR/ssh/ssh_config"
  else
    printf '%s --trace %s' "$E2E_AGENT" "$BED_DIR/trace.jsonl"
  fi
}
uses_agent() { [[ "$E2E_AGENT" != ssh ]]; }
need_agent() { uses_agent || skip "needs k8s-agent (plain ssh cannot wait for pods)"; }

# A single-path executable that runs the agent (for hydra's -launcher-exec and for call logging):
# logs "from=<hostname> <argv>" to $BED_DIR/agent-calls.log, then execs the agent.
make_agent_wrapper() {
  local w="$BED_DIR/bin/agent" target
  mkdir -p "$BED_DIR/bin"
  if uses_agent; then target="$E2E_AGENT --trace $BED_DIR/trace.jsonl"; else target="ssh -F $BED_DIR/ssh/ssh_config"; fi
  printf '#!/bin/sh\necho "agent-call from=$(hostname) $*" >>%s/agent-calls.log\nexec %s "$@"\n' \
    "$BED_DIR" "$target" >"$w"
  chmod 755 "$w"
  printf '%s' "$w"
}

# Like make_agent_wrapper, but the agent runs as a child of the wrapper, which logs
# "agent-exit pid=<agent pid> rc=<status> ms=<runtime>" to $BED_DIR/agent-exits.log when it ends (the
# trace's "pid" field names the host of that pid). TERM, INT and HUP are passed on to the agent; the
# explicit <&0 keeps stdin (a background command of a script would get /dev/null).
make_agent_exit_wrapper() {
  local w="$BED_DIR/bin/agent-exit"
  mkdir -p "$BED_DIR/bin"
  cat >"$w" <<EOW
#!/bin/bash
t0=\$(date +%s%N)
$E2E_AGENT --trace $BED_DIR/trace.jsonl "\$@" <&0 &
child=\$!
for s in TERM INT HUP; do trap "kill -\$s \$child 2>/dev/null" \$s; done
while :; do
  wait \$child
  rc=\$?
  kill -0 \$child 2>/dev/null || break # wait was interrupted by a trapped signal
done
echo "agent-exit pid=\$child rc=\$rc ms=\$(((\$(date +%s%N) - t0) / 1000000))" >>$BED_DIR/agent-exits.log
exit \$rc
EOW
  chmod 755 "$w"
  printf '%s' "$w"
}

# Pid of the (first) agent process whose trace names HOST.
trace_pid() {
  "$BED_PY" -c 'import json, sys
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    if sys.argv[2] in (e.get("host"), e.get("pod")) and isinstance(e.get("pid"), int):
        print(e["pid"]); break' "$BED_DIR/trace.jsonl" "$1"
}

# Brings up the bed (N workers) and compiles the MPI program. Sets HELLO.
bed_begin() {
  step "bed up with $1 worker pods (agent: $E2E_AGENT)"
  bed_gc
  bed_up "$1" || fail "bed did not come up"
  HELLO="$(bed_mpi_hello mpicc)" || fail "mpicc failed"
  export HELLO
  step "bed ready: $BED_DIR net $(bed_cidr)"
}

# Starts COMMAND in the launcher pod in the background, in its own process group with default SIGINT
# handling (a background job of a script would ignore SIGINT). Output goes to $BED_DIR/out-TAG.txt.
# Sets JOB_PID and JOB_T0_US (wall clock at start, for trace comparisons).
start_job() {
  local tag="$1"
  shift
  JOB_OUT="$BED_DIR/out-$tag.txt"
  JOB_T0_US="$(now_us)"
  step "start [$tag]: $*"
  "$BED_PY" -c 'import os, signal, sys
os.setsid()
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' bash -c '. "$1"; bed_load "$2"; shift 2; BED_EXEC=1 bed_exec_launcher "$@"' \
    sh "$BED_SRC_DIR/bed.sh" "$BED_DIR" "$@" >"$JOB_OUT" 2>&1 </dev/null &
  JOB_PID=$!
}

# Starts `mpirun --allow-run-as-root --mca plm_rsh_agent <agent> ARGS...` (see start_job).
start_mpirun() {
  local tag="$1"
  shift
  start_job "$tag" mpirun --allow-run-as-root --mca plm_rsh_agent "$(agent_string)" "$@"
}

# Waits for JOB_PID up to SECONDS; sets JOB_RC and JOB_MS (runtime). On timeout kills the job and fails.
wait_job() {
  local limit_s="$1" deadline
  deadline=$(($(now_ms) + limit_s * 1000))
  while kill -0 "$JOB_PID" 2>/dev/null; do
    if (($(now_ms) > deadline)); then
      kill -KILL -- "-$JOB_PID" 2>/dev/null
      wait "$JOB_PID" 2>/dev/null
      fail "job still running after ${limit_s}s (killed)"
    fi
    sleep 0.05
  done
  wait "$JOB_PID"
  JOB_RC=$?
  JOB_MS=$((($(now_us) - JOB_T0_US) / 1000))
  step "job ended rc=$JOB_RC after ${JOB_MS} ms"
}

# Runs mpirun to completion (start + wait).
run_mpirun() {
  local tag="$1" limit="$2"
  shift 2
  start_mpirun "$tag" "$@"
  wait_job "$limit"
}

# Waits until FILE has at least COUNT lines matching REGEX, up to SECONDS.
wait_for_lines() {
  local file="$1" regex="$2" count="$3" limit_s="$4" deadline n
  deadline=$(($(now_ms) + limit_s * 1000))
  while n="$(grep -cE "$regex" "$file" 2>/dev/null)"; ((${n:-0} < count)); do
    (($(now_ms) > deadline)) && fail "timed out waiting for $count lines /$regex/ in $(basename "$file")"
    kill -0 "$JOB_PID" 2>/dev/null || fail "job exited before $count lines /$regex/ appeared"
    sleep 0.05
  done
}

# Waits up to SECONDS until CMD... succeeds, polled every 50 ms; fails naming WHAT otherwise.
wait_for_cond() {
  local limit_s="$1" what="$2" deadline
  shift 2
  deadline=$(($(now_ms) + limit_s * 1000))
  until "$@"; do
    (($(now_ms) > deadline)) && fail "timed out after ${limit_s}s waiting for $what"
    sleep 0.05
  done
}

# Data segments worker NAME's sshd received on its established sessions (ss -i data_segs_in): while a
# job is quiet, one per keepalive request of the agent.
sshd_data_segs_in() {
  bed_exec_worker "$1" ss -Htin state established '( sport = :22 )' |
    grep -o 'data_segs_in:[0-9]*' | awk -F: '{ s += $2 } END { print s + 0 }'
}
segs_in_at_least() { (($(sshd_data_segs_in "$1") >= $2)); }

# Sleeps until MS milliseconds after the job started (scheduling scenario events, not awaiting conditions).
at_ms() {
  local target_ms=$((JOB_T0_US / 1000 + $1)) left
  left=$((target_ms - $(now_ms)))
  ((left > 0)) && sleep "$(printf '%d.%03d' $((left / 1000)) $((left % 1000)))"
  return 0
}

expect_rc() {
  [[ "$JOB_RC" == "$1" ]] || fail "mpirun exit status $JOB_RC, expected $1"
}
expect_rc_nonzero() {
  [[ "$JOB_RC" != 0 ]] || fail "mpirun succeeded, expected a failure"
}

# Every rank of a SIZE-rank job reported ok; prints the host of each rank.
expect_ranks() {
  local size="$1" got
  got="$(grep -cE "^mpi_hello rank=[0-9]+ size=$size host=[^ ]+ allreduce=[0-9]+ expect=[0-9]+ ok$" "$JOB_OUT")"
  [[ "$got" == "$size" ]] || fail "$got of $size ranks reported ok"
  grep -q ' BAD$' "$JOB_OUT" && fail "an Allreduce result was wrong"
  step "all $size ranks ok: $(sed -nE 's/^mpi_hello rank=([0-9]+) .* host=([^ ]+) .*/\1@\2/p' "$JOB_OUT" | sort -n | tr '\n' ' ')"
}

# The ranks ran on exactly these hosts (pod hostnames), COUNT ranks each.
expect_rank_hosts() {
  local per="$1" host got
  shift
  for host in "$@"; do
    got="$(grep -cE "^mpi_hello rank=[0-9]+ size=[0-9]+ host=$host " "$JOB_OUT")"
    [[ "$got" == "$per" ]] || fail "$got ranks on host $host, expected $per"
  done
}

expect_output() {
  grep -qE "$1" "$JOB_OUT" || fail "mpirun output lacks /$1/"
}

expect_faster_than() {
  ((JOB_MS < $1)) || fail "took ${JOB_MS} ms, expected < $1 ms"
}

# Trace assertions (only with the agent). See tests/bed/trace_tool.py.
trace() { "$BED_PY" "$TRACE_TOOL" "$1" "$BED_DIR/trace.jsonl" "${@:2}"; }
expect_trace() {
  uses_agent || return 0
  trace "$@" || fail "trace: $*"
}
# The standard path for a host: resolved -> pod_running -> ssh_ready -> started.
expect_trace_path() {
  local host
  for host in "$@"; do expect_trace order "$host" resolved pod_running ssh_ready started; done
}

# Nothing but the bed's own daemons may be left in any pod after LIMIT seconds.
expect_no_leftovers() {
  local left
  left="$(bed_wait_no_leftovers "${1:-5}")" || fail "processes left in pods after ${1:-5}s: $(echo "$left" | tr '\n' ';')"
  step "no processes left in any pod"
}

# Prints the per-host timeline from the trace (informational).
show_timeline() {
  # The launch report of the job's trace, as users read it.
  uses_agent && [[ -f "$BED_DIR/trace.jsonl" ]] && "$E2E_AGENT" -q --report "$BED_DIR/trace.jsonl"
  return 0
}
