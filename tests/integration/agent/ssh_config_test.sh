#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The user's ssh_config as ssh reads it, through the k8s-agent binary
# against the fake API server and a real sshd (agent_lib.sh's setup):
#   ssh_config_test.sh AGENT_BINARY SCENARIO
# Each scenario's config sends a host that misses its block to port 1 (or
# an unknown user), so a block ignored or applied to the wrong host fails.
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

KEY_LINES="  IdentityFile $T/ssh/id_ed25519
  UserKnownHostsFile $T/ssh/known_hosts
  StrictHostKeyChecking yes"
run_cfg() {  # run_cfg ARGS...: the agent with only -F's settings; sets RC
  "$AGENT" -F "$T/cfg" "$@" > "$T/out" 2> "$T/err"
  RC=$?
}

case "$SCENARIO" in
match-user-port)
  # ssh logs in as the Match block's user on its port; the agent
  # used to go as the Host * user to port 1.
  cat > "$T/cfg" <<CFG
Match host w-0
  User root
  Port $SSH_PORT
$KEY_LINES
Host *
  User nosuchuser
  Port 1
CFG
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  run_cfg --timeout 20s w-0 'id -un'
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = root ] || fail "remote user: $(cat "$T/out")"
  # The same file with Match's criteria not met: the Host * settings.
  run_cfg --timeout 3s -l nobody-else w-0 true
  [ $RC -eq 255 ] || fail "a non-matching run should fail, rc $RC"
  ok "Match host chose user and port"
  ;;
include)
  mkdir -p "$T/conf.d"
  printf 'Host w-*\n  Port %s\n  User root\n%s\n' "$SSH_PORT" "$KEY_LINES" > "$T/conf.d/20-workers.conf"
  printf 'Host w-0\n  ServerAliveInterval 5\n' > "$T/conf.d/10-first.conf"
  printf 'Include %s/conf.d/*.conf\nHost *\n  Port 1\n' "$T" > "$T/cfg"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  run_cfg --timeout 20s -vv w-0 echo included
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = included ] || fail "stdout: $(cat "$T/out")"
  ok "Include with a glob, in order"
  ;;
unknown-keyword)
  printf 'Host other\n  Prot 22\n' > "$T/cfg"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/stats/reset
  run_cfg w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q "w-0: reading ssh settings: $T/cfg:2: Bad configuration option: Prot" "$T/err" || fail "message"
  [ "$(requests)" = 0 ] || fail "a bad config should fail before any API request"
  ok "a typo fails naming file:line, before the API"
  ;;
wait-only-per-host)
  # Each host's own blocks (w-1's says port 1).
  printf 'Host w-0 w-2\n  Port %s\nHost w-1\n  Port 1\nHost *\n  User root\n%s\n' "$SSH_PORT" "$KEY_LINES" > "$T/cfg"
  for h in w-0 w-1 w-2; do pod $h '{"phase":"Running","podIP":"127.0.0.1"}'; done
  start_sshd
  run_cfg --timeout 3s --wait-only w-0 w-1 w-2
  [ $RC -eq 255 ] || fail "w-1 should not be ready, rc $RC"
  grep -q '^k8s-agent: w-1: .*127.0.0.1:1' "$T/err" || fail "w-1's failure should name port 1"
  grep -q '^k8s-agent: w-0: ' "$T/err" && fail "w-0 should be ready"
  grep -q '1 of 3 host(s) did not become ready' "$T/err" || fail "summary"
  ok "--wait-only reads each host's blocks"
  ;;
hostfile-per-host)
  printf 'Host w-0\n  Port %s\nHost w-1\n  Port 1\nHost *\n  User root\n%s\n' "$SSH_PORT" "$KEY_LINES" > "$T/cfg"
  for h in w-0 w-1; do pod $h '{"phase":"Running","podIP":"127.0.0.1","labels":{"role":"worker"}}'; done
  start_sshd
  run_cfg --timeout 5s --hostfile --ssh-ready --selector role=worker
  [ $RC -eq 0 ] || fail "rc $RC"
  [ "$(cat "$T/out")" = "w-0" ] || fail "hostfile: $(cat "$T/out")"
  ok "--hostfile --ssh-ready probes each pod with its own settings"
  ;;
metachar-user)
  # A user name from a hostfile or plm_rsh_args reaches %r in Match exec;
  # ssh refuses shell metacharacters in it before reading any config.
  printf 'Match exec "echo %%r >/dev/null"\n  Port 1\n' > "$T/cfg"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  api POST /_control/stats/reset
  refused() {  # refused: the last run failed on the user name
    [ $RC -eq 255 ] || fail "rc $RC: $(cat "$T/err")"
    grep -q "remote user name '.*' contains invalid characters" "$T/err" || fail "message: $(cat "$T/err")"
  }
  run_cfg -l "root\$(touch $T/p1)" w-0 true
  refused
  run_cfg "root;touch $T/p2@w-0" true
  refused
  run_cfg -o "User=\`touch $T/p3\`" w-0 true
  refused
  for f in p1 p2 p3; do [ -e "$T/$f" ] && fail "Match exec ran the user name ($f)"; done
  [ "$(requests)" = 0 ] || fail "a bad user name should fail before any API request"
  ok "user names with shell metacharacters are refused before Match exec"
  ;;
bad-permissions)
  # ssh: "Bad owner or permissions" on a ~/.ssh/config others can write;
  # its Match exec must not run. Include of a device is an error.
  mkdir -p "$T/home/.ssh"
  printf 'Match exec "touch %s/ran"\n  Port 1\n' "$T" > "$T/home/.ssh/config"
  chmod 0666 "$T/home/.ssh/config"
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  HOME="$T/home" "$AGENT" w-0 true > "$T/out" 2> "$T/err"
  RC=$?
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q "Bad owner or permissions on $T/home/.ssh/config (uid $(id -u), mode 0666)" "$T/err" || fail "message: $(cat "$T/err")"
  [ -e "$T/ran" ] && fail "the Match exec of a world-writable config ran"
  printf 'Include /dev/zero\n' > "$T/cfg"
  run_cfg w-0 true
  [ $RC -eq 255 ] || fail "Include /dev/zero: rc $RC"
  grep -q "/dev/zero is not a regular file (a character device)" "$T/err" || fail "message: $(cat "$T/err")"
  ok "a config others can write, and an Include of a device, are refused"
  ;;
*)
  fail "unknown scenario $SCENARIO"
  ;;
esac
