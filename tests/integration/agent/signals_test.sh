#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Signals to the agent mid-command (TERM, QUIT, an ignored TERM, a
# full stdout pipe) and a dead or hung peer (sshd killed, stopped).
# The k8s-agent binary against the fake API server (real TLS) and a real
# sshd on loopback, with agent_lib.sh's setup. Each scenario is one ctest
# test (agent.SCENARIO):
#   signals_test.sh AGENT_BINARY SCENARIO
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

case "$SCENARIO" in
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
    mapfile -t stopped <<< "$sessions"; STOPPED_PIDS+=("${stopped[@]}")
    kill -STOP "${stopped[@]}"
    wait_agent 40
    [ $RC -eq 255 ] || fail "rc $RC, want 255 (124: keepalives not served)"
    grep -q 'no answer from w-0' "$T/err" || fail "cause not named: $(cat "$T/err")"
  fi
  ok "rc $RC with a full stdout pipe: $(tr '\n' ' ' < "$T/err")"
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
  ms=$(ms_since "$t0")
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'w-0' "$T/err" || fail "host not named: $(cat "$T/err")"
  grep -q 'no answer' "$T/err" && fail "noticed by a keepalive, not the socket: $(cat "$T/err")"
  ok "$ms ms: $(cat "$T/err")"
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
  mapfile -t stopped <<< "$sessions"; STOPPED_PIDS+=("${stopped[@]}")
  t0=$(date +%s%N)
  kill -STOP "${stopped[@]}"
  wait_agent 40
  ms=$(ms_since "$t0")
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'w-0' "$T/err" || fail "host not named: $(cat "$T/err")"
  grep -qi 'ServerAlive\|keepalive\|not respond' "$T/err" || fail "cause not named: $(cat "$T/err")"
  silence=$(sed -n 's/.*no answer from [^ ]* for \([0-9.]*\)s (.*/\1/p' "$T/err")
  awk -v s="${silence:-0}" 'BEGIN { exit !(s >= 6.0) }' || fail "gave up after '$silence' s of silence, want >= 6.0"
  ok "$ms ms, $silence s of silence: $(cat "$T/err")"
  ;;
*)
  fail "unknown scenario"
  ;;
esac
