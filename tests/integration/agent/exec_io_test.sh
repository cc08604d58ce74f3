#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The remote command: exit status, RSA keys, stdin forwarding and EOF,
# closed standard fds, a stdout reader that goes away.
# The k8s-agent binary against the fake API server (real TLS) and a real
# sshd on loopback, with agent_lib.sh's setup. Each scenario is one ctest
# test (agent.SCENARIO):
#   exec_io_test.sh AGENT_BINARY SCENARIO
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

case "$SCENARIO" in
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
rsa-keys-only)
  # What once failed: an RSA user key and an sshd offering only RSA
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
  # shellcheck disable=SC2016 # expanded by the remote shell
  { printf 'dvm-key-123\n'; sleep 0.3; printf 'tail'; } |
    run_agent w-0 'read key; rest=$(cat); echo "key=$key rest=$rest"'
  [ $RC -eq 0 ] || fail "pipe: rc $RC"
  [ "$(cat "$T/out")" = "key=dvm-key-123 rest=tail" ] || fail "pipe: $(cat "$T/out")"
  # -n: no stdin read at all; the remote side gets EOF at once.
  # shellcheck disable=SC2016 # expanded by the remote shell
  run_agent -n w-0 'n=$(wc -c); echo "bytes=$n"' < "$T/in"
  [ $RC -eq 0 ] || fail "-n: rc $RC"
  [ "$(tr -d ' ' < "$T/out")" = "bytes=0" ] || fail "-n: $(cat "$T/out")"
  # stdin at /dev/null (what Open MPI gives an agent): EOF at once.
  # shellcheck disable=SC2016 # expanded by the remote shell
  run_agent w-0 'n=$(wc -c); echo "bytes=$n"' < /dev/null
  [ "$(tr -d ' ' < "$T/out")" = "bytes=0" ] || fail "/dev/null: $(cat "$T/out")"
  ok "3 MB file and a paused pipe forwarded, then EOF; -n and /dev/null give EOF at once"
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
  [ "$RC" -eq 255 ] || fail "rc $RC, want 255 as ssh (124: still running)"
  grep -q 'stdout.*Broken pipe' "$T/err" || fail "cause not named: $(cat "$T/err")"
  wait_for 10 remote_gone || fail "remote yes still running"
  rm -f "$T/remote.pid"
  ssh_first=$(timeout 30 "${OPENSSH[@]}" "$REMOTE_YES" 2>/dev/null | head -1)
  ssh_rc=${PIPESTATUS[0]}
  { [ "$ssh_first" = y ] && [ "$ssh_rc" -eq 255 ]; } || fail "OpenSSH: '$ssh_first', rc $ssh_rc"
  wait_for 10 remote_gone || fail "remote yes still running after OpenSSH"
  ok "255 and the remote yes gone, as OpenSSH: $(cat "$T/err")"
  ;;
*)
  fail "unknown scenario"
  ;;
esac
