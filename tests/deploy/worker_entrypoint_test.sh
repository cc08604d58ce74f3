#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs k8s-agent-sshd (the worker image's ENTRYPOINT) as uid 1000 in a
# private network namespace with a fake ssh Secret, logs in with the config
# that images/launcher-entrypoint.sh writes, and checks the session (uid,
# PATH, LD_LIBRARY_PATH, agent settings) and strict host key checking.
#
# uid 1000 gets a passwd entry ("mpiuser", HOME in the temp dir) through
# /etc/passwd and /etc/group copies bind-mounted in a private mount
# namespace, so the machine's user database is never modified, even when
# uid 1000 already belongs to someone else.
# Usage: worker_entrypoint_test.sh [REPO_DIR], with K8S_AGENT_SSHD naming
# the built k8s-agent-sshd (ctest sets it). Needs root, ip, sshd, ssh.
# shellcheck disable=SC2016 # Single-quoted $VARS are for the remote shell.
set -euo pipefail

repo="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
# shellcheck source=tests/lib/testlib.sh
source "$repo/tests/lib/testlib.sh"
TEST_KEEP_GOING=1
if [[ "$(id -u)" != 0 ]]; then
  skip "needs root (network namespace, setpriv)"
fi
[[ -x "${K8S_AGENT_SSHD:-}" ]] || fail "K8S_AGENT_SSHD must name the built k8s-agent-sshd (ctest sets it)"
for tool in ip sshd ssh ssh-keygen setpriv unshare; do
  command -v "$tool" >/dev/null || PATH="$PATH:/usr/sbin:/sbin"
  command -v "$tool" >/dev/null || skip "$tool not installed"
done

tmp="$(mktemp -d /tmp/k8s-deploy-worker.XXXXXX)"
chmod 0755 "$tmp"  # uid 1000 must traverse it to reach its HOME.
ns="k8s-deploy-$$-$RANDOM"
sshd_pid=""
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  kill_pids ${sshd_pid:+"$sshd_pid"}
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT


# --- Fake Secret, laid out as the kubelet does it: timestamped data dir,
# ..data symlink, per-key symlinks; files root:fsGroup 0440 (defaultMode
# 0440, fsGroup 1000), directory world-writable and sticky.
secret="$tmp/secret"
data="..2024_01_01_00_00_00.000000001"
mkdir -p "$secret/$data"
ssh-keygen -q -t ed25519 -N '' -C job-user -f "$secret/$data/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -C job-host -f "$secret/$data/ssh_host_ed25519_key"
ln -s "$data" "$secret/..data"
for f in id_ed25519 id_ed25519.pub ssh_host_ed25519_key ssh_host_ed25519_key.pub; do
  ln -s "..data/$f" "$secret/$f"
done
chown -R 0:1000 "$secret"
chmod 0440 "$secret/$data"/*
chmod 2755 "$secret/$data"
chmod 1777 "$secret"

# --- passwd/group copies naming uid 1000 "mpiuser".
awk -F: -v home="$tmp/home" '$3 != 1000 { print } END {
  print "mpiuser:x:1000:1000:k8s-agent deploy test:" home ":/bin/bash" }' /etc/passwd >"$tmp/passwd"
awk -F: '$3 != 1000 { print } END { print "mpiuser:x:1000:" }' /etc/group >"$tmp/group"
chmod 0644 "$tmp/passwd" "$tmp/group"
for h in home lhome; do
  install -d -m 0755 -o 1000 -g 1000 "$tmp/$h"
done

session_path="/usr/local/bin:/usr/bin:/bin:/opt/k8s-deploy-test/bin"
session_ld="/opt/k8s-deploy-test/lib"

# Runs "$@" as uid/gid 1000 with the passwd overlay and a clean environment
# (HOME=$1 then VAR=value words, then the command). Every step execs, so the
# pid of the caller's process is the pid of the final command.
mpiuser_cmd() {  # home: sets the array cmd
  cmd=(unshare --mount --propagation private sh -c '
    mount --bind "$1/passwd" /etc/passwd && mount --bind "$1/group" /etc/group || exit 1
    shift; exec "$@"' sh "$tmp"
    setpriv --reuid=1000 --regid=1000 --clear-groups
    env -i HOME="$1" USER=mpiuser LOGNAME=mpiuser)
}
as_mpiuser() {
  local cmd
  mpiuser_cmd "$1"
  shift
  "${cmd[@]}" "$@"
}

# --- Launcher side: the client config from the same Secret.
as_mpiuser "$tmp/lhome" PATH="$session_path" SECRET_DIR="$secret" \
  "$repo/images/launcher-entrypoint.sh" true
cfg="$tmp/lhome/.ssh/config"
[[ -f "$cfg" ]] || fail "launcher-entrypoint wrote no $cfg"
grep -q '^  Port 2222$' "$cfg" || fail "no Port 2222 in $cfg"
expect_eq "launcher known_hosts is the shared host key for *" \
  "*,[*]:2222 $(cut -d' ' -f1,2 "$secret/ssh_host_ed25519_key.pub")" \
  "$(cat "$tmp/lhome/.ssh/known_hosts_workers")"
expect_eq "launcher identity mode" 600 "$(stat -c %a "$tmp/lhome/.ssh/id_ed25519")"

# Same, for a job that names its workers.
as_mpiuser "$tmp/lhome" PATH="$session_path" SECRET_DIR="$secret" \
  WORKER_HOST_PATTERN="mpi-worker-*" "$repo/images/launcher-entrypoint.sh" true
cp "$tmp/lhome/.ssh/known_hosts_workers" "$tmp/known_hosts_pattern"
expect_eq "pattern known_hosts" \
  "mpi-worker-*,[mpi-worker-*]:2222 $(cut -d' ' -f1,2 "$secret/ssh_host_ed25519_key.pub")" \
  "$(cat "$tmp/known_hosts_pattern")"
as_mpiuser "$tmp/lhome" PATH="$session_path" SECRET_DIR="$secret" \
  "$repo/images/launcher-entrypoint.sh" true  # Back to "*".

# --- Worker: sshd on 2222 as uid 1000 in its own network namespace.
ip netns add "$ns"
ip -n "$ns" link set lo up
# Every exec keeps the pid (ip netns exec, unshare, sh, setpriv, env and
# k8s-agent-sshd all exec), so $! is sshd's pid. The copy is where the image
# has it, with no sshd beside it: it runs the system's /usr/sbin/sshd.
install -d -m 0755 "$tmp/bin"
install -m 0755 "$K8S_AGENT_SSHD" "$tmp/bin/k8s-agent-sshd"
run_dir="$tmp/home/.sshd"
mpiuser_cmd "$tmp/home"
ip netns exec "$ns" "${cmd[@]}" PATH="$session_path" LD_LIBRARY_PATH="$session_ld" \
  K8S_AGENT_NAMESPACE=deploy-test \
  "$tmp/bin/k8s-agent-sshd" --keys "$secret" --run-dir "$run_dir" >"$tmp/sshd.log" 2>&1 &
sshd_pid=$!

ready=0
for _ in $(seq 1 100); do  # Up to 10 s.
  kill -0 "$sshd_pid" 2>/dev/null || break
  if ip netns exec "$ns" bash -c 'exec 3<>/dev/tcp/127.0.0.1/2222' 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.1
done
if [[ "$ready" != 1 ]]; then
  echo "--- sshd log:" >&2
  cat "$tmp/sshd.log" >&2
  fail "sshd never listened on 127.0.0.1:2222 in $ns"
  exit 1
fi
expect_eq "sshd pid file" "$sshd_pid" "$(cat "$run_dir/sshd.pid" 2>/dev/null)"
expect_eq "sshd is the system's" /usr/sbin/sshd "$(readlink "/proc/$sshd_pid/exe")"
expect_eq "run dir owner and mode" "1000 700" "$(stat -c '%u %a' "$run_dir")"
expect_eq "authorized_keys owner and mode" "1000 600" "$(stat -c '%u %a' "$run_dir/user/authorized_keys")"
[[ -f "$run_dir/user/config" ]] || fail "worker has no ssh client config (needed for tree spawn)"

remote() {  # ssh options... -- runs the rest on the worker
  ip netns exec "$ns" ssh -F "$cfg" -l mpiuser -o ConnectTimeout=5 "$@"
}
out="$(remote 127.0.0.1 'id -u; echo "$PATH"; echo "$LD_LIBRARY_PATH"; echo "$K8S_AGENT_NAMESPACE"' 2>"$tmp/ssh.err")" ||
  { cat "$tmp/ssh.err" "$tmp/sshd.log" >&2; fail "ssh login failed"; }
mapfile -t lines <<<"$out"
expect_eq "remote id -u" 1000 "${lines[0]:-}"
expect_eq "remote PATH" "$session_path" "${lines[1]:-}"
expect_eq "remote LD_LIBRARY_PATH" "$session_ld" "${lines[2]:-}"
expect_eq "remote K8S_AGENT_NAMESPACE" deploy-test "${lines[3]:-}"
out="$(remote 127.0.0.1 'echo "$K8S_AGENT_SSH_CONFIG"' 2>/dev/null)"
expect_eq "remote K8S_AGENT_SSH_CONFIG (tree spawn's settings)" "$run_dir/user/config" "$out"
expect_eq "remote exit status" 7 "$(remote 127.0.0.1 'exit 7' 2>/dev/null; echo $?)"

# Strict host key checking against the pattern file: a worker name matches,
# any other name is refused.
out="$(remote -o UserKnownHostsFile="$tmp/known_hosts_pattern" -o HostKeyAlias=mpi-worker-3 \
  127.0.0.1 'echo pattern-ok' 2>&1)" || true
expect_eq "known_hosts pattern accepts mpi-worker-3" pattern-ok "$out"
if remote -o UserKnownHostsFile="$tmp/known_hosts_pattern" -o HostKeyAlias=other-0 \
  127.0.0.1 true 2>/dev/null; then
  fail "a host outside the pattern was accepted"
else
  echo "ok: a host outside the pattern is refused"
fi

testlib_exit PASS
