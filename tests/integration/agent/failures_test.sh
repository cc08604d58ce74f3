#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Failures and their messages: bad host names, wrong CA or token, host
# key, kex and user key refusals, no token in any output, and pod text
# that must not forge lines.
# The k8s-agent binary against the fake API server (real TLS) and a real
# sshd on loopback, with agent_lib.sh's setup. Each scenario is one ctest
# test (agent.SCENARIO):
#   failures_test.sh AGENT_BINARY SCENARIO
# shellcheck source=tests/integration/agent/agent_lib.sh
source "$(cd "$(dirname "$0")" && pwd)/agent_lib.sh" "$@"

case "$SCENARIO" in
bad-hosts)
  api POST /_control/stats/reset
  for h in 'w/0' 'w?x' 'w#0' 'w%2e' '..' 'a b' $'w\n0' "$(printf 'x%.0s' $(seq 1 300))"; do
    run_agent "$h" true
    [ $RC -eq 255 ] || fail "host '$h': rc $RC"
    grep -q 'invalid host name\|empty host name\|contains invalid characters' "$T/err" || fail "host '$h': $(cat "$T/err")"
  done
  [ "$(requests)" = 0 ] || fail "a bad host reached the API server"
  ok "rejected before any request"
  ;;
wrong-ca)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  K8S_AGENT_CERTIFICATE_AUTHORITY="$T/api/other-ca.crt" run_agent w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -qi 'certificate' "$T/err" || fail "message: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
wrong-token)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  printf 'not-the-token' > "$T/bad-token"
  K8S_AGENT_TOKEN_FILE="$T/bad-token" run_agent w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -qi 'unauthorized\|401\|token' "$T/err" || fail "message: $(cat "$T/err")"
  grep -q "$(cat "$T/api/token")" "$T/err" "$T/trace.jsonl" && fail "token leaked"
  ok "$(cat "$T/err")"
  ;;
host-key-mismatch)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  start_sshd
  ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/other"
  printf '[w-0]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$T/ssh/other.pub")" > "$T/ssh/known_hosts"
  run_agent w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'SHA256:' "$T/err" || fail "fingerprint missing: $(cat "$T/err")"
  ok "$(cat "$T/err")"
  ;;
kex-mismatch)
  # Nothing in common is permanent: one connection, exit 255 naming both
  # sides, not retries until --timeout.
  printf 'KexAlgorithms sntrup761x25519-sha512@openssh.com\n' | cat - "$T/ssh/sshd_config" > "$T/ssh/cfg_head"
  mv "$T/ssh/cfg_head" "$T/ssh/sshd_config"
  start_sshd
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  run_agent --timeout 120 w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'no common key exchange algorithm' "$T/err" || fail "message: $(cat "$T/err")"
  grep -q 'offers sntrup761x25519-sha512@openssh.com' "$T/err" || fail "server side missing: $(cat "$T/err")"
  grep -q 'curve25519-sha256' "$T/err" || fail "our side missing: $(cat "$T/err")"
  # sshd logs each refused negotiation (start_sshd's probe has none).
  n=$(grep -c 'Unable to negotiate' "$SSHD_LOG")
  [ "$n" -eq 1 ] || fail "$n negotiations with sshd (retried?)"
  ok "$(cat "$T/err")"
  ;;
user-key-unauthorized)
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  : > "$T/ssh/authorized_keys"
  start_sshd
  t0=$(date +%s%N)
  run_agent --timeout 10s w-0 true
  ms=$(ms_since "$t0")
  [ $RC -eq 255 ] || fail "rc $RC"
  grep -q 'root' "$T/err" || fail "user not named: $(cat "$T/err")"
  grep -q "$T/ssh/id_ed25519" "$T/err" || fail "key not named: $(cat "$T/err")"
  # Not worth retrying: one connection reached sshd, and the message is the
  # refusal, not the --timeout's.
  n=$(grep -c 'Connection closed by authenticating user' "$SSHD_LOG")
  [ "$n" -eq 1 ] || fail "$n connections for an auth refusal: $(cat "$SSHD_LOG")"
  grep -q 'timed out' "$T/err" && fail "retried until the timeout: $(cat "$T/err")"
  ok "$ms ms, one connection: $(cat "$T/err")"
  ;;
no-token-leak)
  # Every failure path, at the highest verbosity, with the trace on: the
  # token (good or bad) must not appear in anything the agent wrote.
  pod w-0 '{"phase":"Running","podIP":"127.0.0.1"}'
  printf 'bad-token-%s' "$(openssl rand -hex 8)" > "$T/bad-token"
  good=$(cat "$T/api/token"); bad=$(cat "$T/bad-token")
  : > "$T/all"
  collect() { cat "$T/out" "$T/err" >> "$T/all"; }
  K8S_AGENT_TOKEN_FILE="$T/bad-token" run_agent -vv --timeout 3s w-0 true; collect
  [ $RC -eq 255 ] || fail "401: rc $RC"
  K8S_AGENT_CERTIFICATE_AUTHORITY="$T/api/other-ca.crt" run_agent -vv --timeout 3s w-0 true; collect
  [ $RC -eq 255 ] || fail "wrong CA: rc $RC"
  api POST /_control/faults '{"status":403,"count":1}'
  run_agent -vv --timeout 3s w-0 true; collect
  [ $RC -eq 255 ] || fail "403: rc $RC"
  api POST /_control/faults '[{"status":500,"count":1},{"status":401,"count":1}]'
  run_agent -vv --timeout 3s w-0 true; collect
  api POST /_control/faults '{"status":410,"count":1,"method":"WATCH","in_stream":true}'
  run_agent -vv --timeout 2s w-late true; collect
  run_agent -vv --hostfile --selector role=none; collect
  start_sshd
  run_agent -vv w-0 'env; echo done'; collect
  [ $RC -eq 0 ] || fail "good run: rc $RC"
  cat "$T/trace.jsonl" >> "$T/all"
  [ "$(wc -l < "$T/all")" -gt 10 ] || fail "suspiciously little output"
  grep -qF -- "$good" "$T/all" && fail "good token leaked: $(grep -F -- "$good" "$T/all")"
  grep -qF -- "$bad" "$T/all" && fail "bad token leaked: $(grep -F -- "$bad" "$T/all")"
  grep -qi 'authorization: bearer [^*<]' "$T/all" && fail "an Authorization header was logged"
  ok "$(wc -l < "$T/all") lines of output and trace, no token"
  ;;
failed-message-escaped)
  # A pod's status.message is the API's text, not ours: a newline in it must
  # not forge another host's line, nor an ESC or a C1 CSI (U+009B) reach the
  # terminal. Each is shown as \xNN; the trace stays one JSON object a line.
  pod w-0 '{"phase":"Failed","reason":"Evicted","message":"gone\nk8s-agent: w-1: forged\u001b[31mred\u009b2J"}'
  run_agent w-0 true
  [ $RC -eq 255 ] || fail "rc $RC"
  [ "$(grep -c '^k8s-agent: ' "$T/err")" -eq 1 ] || fail "not one line: $(cat -A "$T/err")"
  grep -q '^k8s-agent: w-1' "$T/err" && fail "forged a line for w-1: $(cat -A "$T/err")"
  LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]\|\xc2\x9b' "$T/err" && fail "control character on stderr: $(cat -A "$T/err")"
  grep -qF 'is Failed: Evicted: gone\x0ak8s-agent: w-1: forged\x1b[31mred\xc2\x9b2J' "$T/err" || fail "message: $(cat -A "$T/err")"
  /usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    json.loads(line)' "$T/trace.jsonl" || fail "trace: $(cat -A "$T/trace.jsonl")"
  LC_ALL=C grep -q $'\x1b' "$T/trace.jsonl" && fail "raw ESC in the trace: $(cat -A "$T/trace.jsonl")"
  ok "$(cat "$T/err")"
  ;;
*)
  fail "unknown scenario"
  ;;
esac
