# shellcheck shell=bash
# shellcheck disable=SC2034  # Set here, used by the scenario files.
# SPDX-License-Identifier: Apache-2.0
# The agent integration tests' setup: the fake API server (real TLS), a
# real sshd on loopback (tests/lib/sshd_harness.sh), the agent's
# environment, cleanup by pid, and the helpers the scenarios share (fail,
# ok, skip: tests/lib/testlib.sh). Each test file sources it with its own
# arguments, then runs its scenario:
#   source agent_lib.sh AGENT_BINARY SCENARIO
# Theme files (agent.SCENARIO tests): lookup_test.sh, hostfile_test.sh,
# api_faults_test.sh, exec_io_test.sh, signals_test.sh, failures_test.sh;
# and hostile_test.sh, ssh_config_test.sh, kubeconfig_test.sh,
# api_liveness_test.sh (agent.THEME.SCENARIO); current_pods_test.sh.
set -uo pipefail

AGENT=$1
SCENARIO=$2
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/testlib.sh
source "$HERE/../../lib/testlib.sh"
# sshd runs in a mount namespace of its own (unshare --mount, below) and as
# root, so as another user every scenario would fail with "unshare failed":
# skipped instead (ctest's SKIP_RETURN_CODE 77), with the reason.
if [ "$(id -u)" != 0 ]; then
  skip "the agent integration tests need root (unshare --mount, sshd)"
fi
TEST_TAG=$SCENARIO
# shellcheck source=tests/fake_apiserver/fake_apiserver_lib.sh
source "$HERE/../../fake_apiserver/fake_apiserver_lib.sh"

T=$(mktemp -d /tmp/k8s-agent-it.XXXXXX)
AFTER_PIDS=()
STOPPED_PIDS=()
AGENT_PID=
cleanup() {
  kill_pids ${AFTER_PIDS[@]+"${AFTER_PIDS[@]}"}
  [ -n "${AGENT_PID:-}" ] && { kill -9 "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null; }
  # Processes a scenario stopped or left behind on purpose, by pid.
  for p in ${STOPPED_PIDS[@]+"${STOPPED_PIDS[@]}"}; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
  [ -s "$T/remote.pid" ] && kill -9 "$(cat "$T/remote.pid")" 2>/dev/null
  # sshd, its sessions and the port's holder, by pid.
  sshd_harness_release "$T/ssh"
  fake_apiserver_stop "$T/api"
  rm -rf "$T"
}
trap cleanup EXIT

# fail's evidence: the agent's last output.
on_fail() { for f in "$T"/out "$T"/err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; }

# ---- sshd on 127.0.0.1, own keys, user key authorised --------------------
# The tests' one sshd harness (the C++ SshdFixture's too): $T/ssh holds the
# keys (host_ed25519, id_ed25519), authorized_keys, sshd_config, sshd.log
# and sshd.pid, and the port stays reserved for this test until cleanup.
# shellcheck source=tests/lib/sshd_harness.sh
source "$HERE/../../lib/sshd_harness.sh"
free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
sshd_harness_init "$T/ssh" || fail "sshd harness: init"
SSH_PORT=$(cat "$T/ssh/port")
SSHD_LOG=$T/ssh/sshd.log
# known_hosts: the key under the host names Open MPI would pass, in ssh's
# [name]:port form for a port other than 22, as k8s-agent checks it.
hostkey=$(cut -d' ' -f1,2 "$T/ssh/host_ed25519.pub")
names=""
for h in w-0 w-1 w-2 w-10 w-late node-1 job-0.job.default.svc.cluster.local; do names+="[$h]:$SSH_PORT,"; done
printf '%s %s\n' "${names%,}" "$hostkey" > "$T/ssh/known_hosts"

# (Re)starts sshd with $T/ssh/sshd_config as it is now, on SSH_PORT; returns
# once it listens there.
start_sshd() { sshd_harness_start "$T/ssh" || fail "sshd did not start (the harness said why, above)"; }
# Kills sshd and every process under it; returns once it has gone.
stop_sshd() { sshd_harness_stop "$T/ssh" || fail "sshd did not stop"; }
sshd_pid() { cat "$T/ssh/sshd.pid"; }

# ---- fake API server ------------------------------------------------------
fake_apiserver_certs "$T/api" || fail "certs"
printf '[]' > "$T/pods.json"
fake_apiserver_start "$T/api" --pods "$T/pods.json" || fail "apiserver"
api() { fake_apiserver_control "$T/api" "$@" >/dev/null || fail "control $*"; }
pod() { api PUT "/_control/pods/default/$1" "$2"; }
requests() { fake_apiserver_control "$T/api" GET /_control/stats | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])'; }

export K8S_AGENT_SERVER="https://127.0.0.1:$FAKE_APISERVER_PORT"
export K8S_AGENT_CERTIFICATE_AUTHORITY="$T/api/ca.crt"
export K8S_AGENT_TOKEN_FILE="$T/api/token"
export K8S_AGENT_NAMESPACE=default
export K8S_AGENT_TRACE="$T/trace.jsonl"
unset KUBERNETES_SERVICE_HOST KUBECONFIG
SSH_ARGS=(-p "$SSH_PORT" -i "$T/ssh/id_ed25519" -o "UserKnownHostsFile=$T/ssh/known_hosts" -o StrictHostKeyChecking=yes -l root)

run_agent() {  # run_agent ARGS... ; sets RC
  "$AGENT" "${SSH_ARGS[@]}" "$@" > "$T/out" 2> "$T/err"
  RC=$?
}
run_agent_bg() {  # run_agent_bg ARGS... ; sets AGENT_PID
  "$AGENT" "${SSH_ARGS[@]}" "$@" > "$T/out" 2> "$T/err" &
  AGENT_PID=$!
}
wait_agent() {  # wait_agent SECONDS: sets RC (124 and kills it on timeout)
  for _ in $(seq 1 $(( $1 * 20 ))); do
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$AGENT_PID" 2>/dev/null; then
    kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null; AGENT_PID=; RC=124
    return
  fi
  wait "$AGENT_PID"; RC=$?; AGENT_PID=
}
wait_for() {  # wait_for SECONDS CMD...: poll CMD every 50 ms
  for _ in $(seq 1 $(( $1 * 20 ))); do "${@:2}" && return 0; sleep 0.05; done
  return 1
}
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# The remote command of the mid-command scenarios records its pid so that
# the test can check it ended, and clean it up by pid if it did not.
REMOTE_SLEEP='echo $$ > '"$T"'/remote.pid; exec sleep 30'
remote_started() { [ -s "$T/remote.pid" ]; }
remote_gone() { [ -s "$T/remote.pid" ] && ! kill -0 "$(cat "$T/remote.pid")" 2>/dev/null; }
REMOTE_YES='echo $$ > '"$T"'/remote.pid; exec yes'
# OpenSSH's client on the same sshd, to compare with.
OPENSSH=(/usr/bin/ssh -p "$SSH_PORT" -i "$T/ssh/id_ed25519" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR root@127.0.0.1)
pipe_full() {  # pipe_full FIFO: the pipe holds as many bytes as it can
  /usr/bin/python3 -c 'import fcntl, os, struct, sys, termios
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
queued = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
sys.exit(0 if queued >= fcntl.fcntl(fd, 1032) else 1)  # F_GETPIPE_SZ' "$1"
}
remote_alive() { kill -0 "$(cat "$T/remote.pid")" 2>/dev/null; }
# Per-connection sshd processes: children of the listener (by pid).
sshd_sessions() { pgrep -P "$(sshd_pid)"; }
wait_watching() {  # wait_watching N: until N WATCH requests were counted
  wait_for 10 watches_at_least "$1" || fail "never saw $1 watch(es)"
}
watches_at_least() {
  local n
  n=$(fake_apiserver_control "$T/api" GET /_control/stats | /usr/bin/python3 -c 'import json,sys; print(sum(v for k,v in json.load(sys.stdin)["requests"].items() if k.startswith("WATCH")))') || return 1
  [ "$n" -ge "$1" ]
}
stat_of() {  # stat_of KEY: a top-level number of /_control/stats (quorum_lists, ...)
  fake_apiserver_control "$T/api" GET /_control/stats | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}
count_of() {  # count_of VERB: requests with that verb since the last reset
  fake_apiserver_control "$T/api" GET /_control/stats | /usr/bin/python3 -c 'import json,sys; print(sum(v for k,v in json.load(sys.stdin)["requests"].items() if k.startswith(sys.argv[1] + " ")))' "$1"
}
trace_has() { grep -q "\"event\":\"$1\"" "$T/trace.jsonl" || fail "no $1 in trace"; }
after() {  # after SECONDS CMD...: run a control step later, in the background
  local s=$1; shift
  ( sleep "$s"; "$@" ) &
  AFTER_PIDS+=($!)
}
