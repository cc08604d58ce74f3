#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# k8s-agent-sshd with real sshd binaries, in a network namespace of its own,
# from Secret directories laid out as the kubelet mounts them (..data
# symlinks, files 0644): the project's layout and mpi-operator's (one ECDSA
# P-521 PEM key as id_rsa that is also the host key), as root and as uid
# 1000; sessions get the container's PATH and the tree-spawn client
# settings (a second hop from the session works); bad key directories and
# options are one line and exit 255; SIGTERM ends it.
#
# Runs with Debian's /usr/sbin/sshd, and again with the portable sshd
# (scripts/sshd_build.sh) when it is built (said either way).
# Usage: sshd_entry_test.sh K8S_AGENT_SSHD REPO_DIR. Needs root.
# shellcheck disable=SC2016 # single-quoted $VARS are for the remote shell
set -euo pipefail

entry="$1"
repo="$2"
# shellcheck source=tests/lib/testlib.sh
source "$repo/tests/lib/testlib.sh"
TEST_KEEP_GOING=1
if [[ "$(id -u)" != 0 ]]; then
  skip "needs root (network namespace, mount namespace, setpriv)"
fi
PATH="$PATH:/usr/sbin:/sbin"
for tool in ip ssh ssh-keygen setpriv unshare; do
  command -v "$tool" >/dev/null || skip "$tool not installed"
done

tmp="$(mktemp -d /tmp/k8s-sshd-entry.XXXXXX)"
chmod 0755 "$tmp"
ns="k8s-sshd-entry-$$"
# shellcheck disable=SC2317 # called by testlib_on_exit
on_exit() {
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap testlib_on_exit EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up


# secret DIR FILE... : a kubelet-style Secret volume from files in $tmp/keys.
secret() {
  local dir="$1" data="..2026_12_01_00_00_00.000000001" f
  shift
  mkdir -p "$dir/$data"
  for f in "$@"; do
    cp "$tmp/keys/${f#*=}" "$dir/$data/${f%%=*}"
    chmod 0644 "$dir/$data/${f%%=*}"
    ln -s "..data/${f%%=*}" "$dir/${f%%=*}"
  done
  ln -s "$data" "$dir/..data"
  chmod 1777 "$dir"
}

mkdir -p "$tmp/keys"
ssh-keygen -q -t ed25519 -N '' -C job-user -f "$tmp/keys/user"
ssh-keygen -q -t ed25519 -N '' -C job-host -f "$tmp/keys/host"
ssh-keygen -q -t ecdsa -b 521 -m PEM -N '' -C mpi-operator -f "$tmp/keys/p521"
secret "$tmp/s-project" id_ed25519=user id_ed25519.pub=user.pub \
  ssh_host_ed25519_key=host ssh_host_ed25519_key.pub=host.pub
secret "$tmp/s-mpiop" id_rsa=p521 id_rsa.pub=p521.pub authorized_keys=p521.pub
mkdir -p "$tmp/s-empty"

# uid 1000 as "mpiuser" through passwd/group copies bind-mounted in a
# private mount namespace (the machine's user database is not touched).
awk -F: -v home="$tmp/home" '$3 != 1000 { print } END {
  print "mpiuser:x:1000:1000:k8s-agent-sshd test:" home ":/bin/sh" }' /etc/passwd >"$tmp/passwd"
awk -F: '$3 != 1000 { print } END { print "mpiuser:x:1000:" }' /etc/group >"$tmp/group"
chmod 0644 "$tmp/passwd" "$tmp/group"
install -d -m 0755 -o 1000 -g 1000 "$tmp/home"
install -d -m 1777 "$tmp/t"  # TMPDIR: both users make their run dir there.
# A TMPDIR sshd_config must quote (and whose % sshd must not expand).
spaced_tmp="$tmp/t dir %u #1"
install -d -m 1777 "$spaced_tmp"
start_tmpdir="$tmp/t"
as_uid_1000=(unshare --mount --propagation private sh -c '
  mount --bind "$1/passwd" /etc/passwd && mount --bind "$1/group" /etc/group || exit 1
  shift; exec "$@"' sh "$tmp" setpriv --reuid=1000 --regid=1000 --clear-groups)

port=2300
# start NAME [--as-1000] ARGS...: starts k8s-agent-sshd in the namespace on
# the next port, waits until it accepts (or has exited), sets $port, $pid.
start() {
  local name="$1" prefix=()
  shift
  if [[ "${1:-}" == --as-1000 ]]; then prefix=("${as_uid_1000[@]}"); shift; fi
  port=$((port + 1))
  ip netns exec "$ns" "${prefix[@]}" env -i PATH="/opt/k8s-test/bin:/usr/bin:/bin" \
    HOME="$tmp/home" TMPDIR="$start_tmpdir" K8S_AGENT_NAMESPACE=entry-test \
    "$entry" --port "$port" "$@" >"$tmp/$name.log" 2>&1 &
  pid=$!
  kill_on_exit "$pid"
  local i
  for ((i = 0; i < 300; i++)); do  # bounded: 30 s
    kill -0 "$pid" 2>/dev/null || return 1
    ip netns exec "$ns" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# remote KEY KNOWN_PUB USER CMD: one ssh login in the namespace.
remote() {
  local key="$1" pub="$2" user="$3"
  shift 3
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$pub")" >"$tmp/known_hosts"
  ip netns exec "$ns" ssh -n -i "$key" -o IdentitiesOnly=yes -o BatchMode=yes \
    -o UserKnownHostsFile="$tmp/known_hosts" -o StrictHostKeyChecking=yes \
    -o ConnectTimeout=10 -p "$port" -l "$user" 127.0.0.1 "$@"
}

stop() {  # SIGTERM ends sshd at once: its pid is gone within the bound.
  local i
  kill -TERM "$pid"
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    sleep 0.1
  done
  fail "$1: still running 10 s after SIGTERM"
}

run_suite() {  # LABEL SSHD
  local label="$1" sshd="$2" out
  echo "--- $label: $sshd"
  if start "$label-root" --keys "$tmp/s-project" --sshd "$sshd"; then
    out="$(remote "$tmp/keys/user" "$tmp/keys/host.pub" root \
      'id -u; echo "$PATH"; echo "$K8S_AGENT_NAMESPACE"; echo "$K8S_AGENT_SSH_CONFIG"' 2>"$tmp/ssh.err")" ||
      { cat "$tmp/ssh.err" "$tmp/$label-root.log" >&2; fail "$label: root login"; }
    mapfile -t lines <<<"$out"
    expect_eq "$label: root session uid" 0 "${lines[0]:-}"
    # root's own shell rc files may prepend to it; the container's comes last.
    [[ "${lines[1]:-}" == *"/opt/k8s-test/bin:/usr/bin:/bin" ]] ||
      fail "$label: session PATH lacks the container's: ${lines[1]:-}"
    expect_eq "$label: K8S_AGENT_ variables reach sessions" entry-test "${lines[2]:-}"
    # Tree spawn: from the session, the client settings reach a worker
    # (this one) with the job key, the shared host key checked.
    out="$(remote "$tmp/keys/user" "$tmp/keys/host.pub" root \
      'ssh -n -F "$K8S_AGENT_SSH_CONFIG" 127.0.0.1 echo second-hop' 2>"$tmp/ssh.err")" ||
      { cat "$tmp/ssh.err" >&2; }
    expect_eq "$label: second hop with the tree-spawn settings" second-hop "$out"
    expect_eq "$label: remote exit status" 7 "$(remote "$tmp/keys/user" "$tmp/keys/host.pub" root 'exit 7' 2>/dev/null; echo $?)"
    if remote "$tmp/keys/host" "$tmp/keys/host.pub" root true 2>/dev/null; then
      fail "$label: a key not in authorized_keys logged in"
    else
      ok "$label: another key is refused"
    fi
    grep -q "host key $tmp/s-project/ssh_host_ed25519_key (a host key of its own)" "$tmp/$label-root.log" ||
      fail "$label: the start-up line does not name the host key: $(head -c 600 "$tmp/$label-root.log")"
    stop "$label-root"
  else
    cat "$tmp/$label-root.log" >&2
    fail "$label: k8s-agent-sshd as root never accepted on $port"
  fi

  start_tmpdir="$spaced_tmp"
  if start "$label-spaced" --keys "$tmp/s-project" --sshd "$sshd"; then
    out="$(remote "$tmp/keys/user" "$tmp/keys/host.pub" root \
      'ssh -n -F "$K8S_AGENT_SSH_CONFIG" 127.0.0.1 echo second-hop && echo "$K8S_AGENT_SSH_CONFIG"' 2>"$tmp/ssh.err")" ||
      cat "$tmp/ssh.err" "$tmp/$label-spaced.log" >&2
    if [[ "$out" == "second-hop"$'\n'"$spaced_tmp/k8s-agent-sshd."*/user/config ]]; then
      ok "$label: a TMPDIR with a space, % and # (login, second hop)"
    else
      fail "$label: TMPDIR '$spaced_tmp': login and second hop gave '$out'"
    fi
    stop "$label-spaced"
  else
    cat "$tmp/$label-spaced.log" >&2
    fail "$label: TMPDIR '$spaced_tmp': never accepted"
  fi
  start_tmpdir="$tmp/t"

  if start "$label-mpiop" --keys "$tmp/s-mpiop" --sshd "$sshd"; then
    out="$(remote "$tmp/keys/p521" "$tmp/keys/p521.pub" root 'id -u' 2>"$tmp/ssh.err")" ||
      cat "$tmp/ssh.err" "$tmp/$label-mpiop.log" >&2
    expect_eq "$label: mpi-operator layout (P-521 id_rsa as host key)" 0 "$out"
    stop "$label-mpiop"
  else
    cat "$tmp/$label-mpiop.log" >&2
    fail "$label: mpi-operator layout never accepted"
  fi

  if start "$label-1000" --as-1000 --keys "$tmp/s-project" --sshd "$sshd"; then
    out="$(remote "$tmp/keys/user" "$tmp/keys/host.pub" mpiuser 'id -u; echo "$PATH"' 2>"$tmp/ssh.err")" ||
      cat "$tmp/ssh.err" "$tmp/$label-1000.log" >&2
    mapfile -t lines <<<"$out"
    expect_eq "$label: uid 1000 serves its own user" 1000 "${lines[0]:-}"
    expect_eq "$label: session PATH is the container's" /opt/k8s-test/bin:/usr/bin:/bin "${lines[1]:-}"
    stop "$label-1000"
  else
    cat "$tmp/$label-1000.log" >&2
    fail "$label: k8s-agent-sshd as uid 1000 never accepted"
  fi
}

# Bad input: one line on stderr, exit 255, at once, before any sshd runs
# (bounded: a silent wait shows as exit 124, not as a hung test).
bad() {  # LABEL EXPECTED-TEXT [--as-1000] [--env VAR=VALUE] ARGS...
  local label="$1" want="$2" rc=0 prefix=(timeout 20)
  shift 2
  if [[ "${1:-}" == --as-1000 ]]; then prefix+=("${as_uid_1000[@]}"); shift; fi
  if [[ "${1:-}" == --env ]]; then prefix+=(env "$2"); shift 2; fi
  "${prefix[@]}" "$entry" "$@" >"$tmp/bad.out" 2>"$tmp/bad.err" || rc=$?
  expect_eq "$label: exit" 255 "$rc"
  expect_eq "$label: one line" 1 "$(wc -l <"$tmp/bad.err")"
  grep -qF -- "$want" "$tmp/bad.err" || fail "$label: '$want' not in: $(cat "$tmp/bad.err")"
}
bad "empty keys dir" "no host key in $tmp/s-empty" --keys "$tmp/s-empty" --sshd /usr/sbin/sshd
bad "missing keys dir" "keys dir $tmp/none is not a directory" --keys "$tmp/none"
bad "unknown user" "--user nosuch-k8s: no such user" --user nosuch-k8s --keys "$tmp/s-project"
bad "bad port" "--port 0: not a port" --port 0
bad "quote in TMPDIR" "has a double quote" --env TMPDIR="$tmp/a\"b" --keys "$tmp/s-project"
bad "bad log level" "not one of sshd's levels" --log-level "$(printf 'INFO\nPermitRootLogin yes')"
bad "unknown option" "--bogus: unknown option" --bogus
# A FIFO where a key file goes: refused at once, not a silent wait for a
# writer.
secret "$tmp/s-fifo" id_rsa=p521
mkfifo "$tmp/s-fifo/..2026_12_01_00_00_00.000000001/authorized_keys"
ln -s ..data/authorized_keys "$tmp/s-fifo/authorized_keys"
bad "FIFO as authorized_keys" "authorized_keys is a FIFO (named pipe), not a regular file" \
  --keys "$tmp/s-fifo" --sshd /usr/sbin/sshd
chmod 000 "$tmp/s-project/..data/id_ed25519.pub"
bad "unreadable file (as uid 1000)" "id_ed25519.pub" --as-1000 --keys "$tmp/s-project"
chmod 0644 "$tmp/s-project/..data/id_ed25519.pub"

run_suite debian /usr/sbin/sshd
portable="$(bash "$repo/scripts/sshd_build.sh" path 2>/dev/null || true)"
if [[ -n "$portable" ]] && bash "$repo/scripts/sshd_build.sh" check 2>/dev/null; then
  run_suite portable "$portable/sshd"
else
  echo "note: the portable sshd is not built here (scripts/sshd_build.sh ensure): tested Debian's sshd only"
fi

testlib_exit PASS
