#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ctest portable.sshd: the portable sshd (scripts/sshd_build.sh) runs in a stock image that has no OpenSSH
# (tests/bed/minbase_root.sh), as root and as uid 1000, and the host's OpenSSH client logs in to it.
#
# usage: portable_sshd_test.sh SANITIZED(ON|OFF)
# Both caches are built when missing unless K8S_SSHD_BUILD=0, within
# K8S_SSHD_BUILD_BUDGET seconds (default 900) for the two together; otherwise, or past the budget, or
# without a reachable Debian mirror, it skips (77) saying why. Then `sshd_build.sh check` (glibc ceiling,
# libc only, the pinned version), then in a private mount + network namespace (loopback only) made here:
# the binaries are copied into a tmpfs over the root's /tmp (as an init container would copy them into an
# emptyDir), a host key is made with the portable ssh-keygen, and sshd is started by chroot with a minimal
# config, once as root and once as uid 1000 (chroot --userspec); `/usr/bin/ssh ... id -u` must print 0 and
# 1000. Prints how long sshd took from start to accepting connections and a login's wall time.
# Every sshd is stopped by its pid; the namespace and its mounts vanish with the test.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$(cd "$HERE/../.." && pwd)"
PORT=2222

# shellcheck source=tests/lib/testlib.sh
source "$HERE/../lib/testlib.sh"
TEST_TAG=portable-sshd-test  # log's lines: [portable-sshd-test HH:MM:SS] ...
# Clock and short waits without forking (a fork+exec costs ~20 ms on a loaded 2-core machine, more than
# what is measured): bash's EPOCHREALTIME, and read -t on a pipe this shell holds both ends of (never ready).
now_ms() {
  local t="${EPOCHREALTIME/[.,]/}"
  NOW=$((t / 1000))
}
exec {NAP_FD}<> <(:)
nap() { read -r -t "$1" -u "$NAP_FD" _ || true; }

# ---- inside the namespaces: ROOT SSHD_DIR ----
# run_sshd MODE USERSPEC USER WANT: one sshd in the root, one login; MODE names its files.
run_sshd() {
  local mode="$1" spec="$2" user="$3" want="$4" root="$ROOT" t0 ms got login_ms
  local d="/tmp/run-$mode"
  mkdir -p "$root$d"
  chroot "$root" /tmp/k8s-agent/ssh-keygen -q -t ed25519 -N '' -C "host-$mode" -f "$d/host_ed25519" ||
    fail "portable ssh-keygen could not make a host key"
  cp "$root/tmp/client/id_ed25519.pub" "$root$d/authorized_keys"
  # A hand-written minimal config: what a job's sshd needs and nothing else.
  cat >"$root$d/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $d/host_ed25519
AuthorizedKeysFile $d/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
SshdSessionPath /tmp/k8s-agent/sshd-session
SshdAuthPath /tmp/k8s-agent/sshd-auth
PerSourcePenalties no
StrictModes no
EOF
  if [[ "$spec" != 0:0 ]]; then chown -R "$spec" "$root$d"; fi
  printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cat "$root$d/host_ed25519.pub")" >"$root/tmp/client/known_hosts"
  now_ms
  t0=$NOW
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot --userspec="$spec" "$root" \
    /tmp/k8s-agent/sshd -D -e -f "$d/sshd_config" >"$root/tmp/sshd-$mode.log" 2>&1 &
  SSHD_PID=$!
  # Accepting: a TCP connect succeeds (bounded: 10 s; each probe is one connection, which
  # PerSourcePenalties no lets through).
  until { exec 3<>"/dev/tcp/127.0.0.1/$PORT"; } 2>/dev/null; do
    kill -0 "$SSHD_PID" 2>/dev/null || fail "sshd ($mode) exited: $(cat "$root/tmp/sshd-$mode.log")"
    now_ms
    ((NOW - t0 < 10000)) || fail "sshd ($mode) not accepting after 10 s: $(cat "$root/tmp/sshd-$mode.log")"
    nap 0.002
  done
  now_ms
  ms=$((NOW - t0))
  exec 3>&-
  now_ms
  t0=$NOW
  got="$(/usr/bin/ssh -F /dev/null -p "$PORT" -i "$root/tmp/client/id_ed25519" -o IdentitiesOnly=yes \
    -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$root/tmp/client/known_hosts" \
    -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=10 "$user@127.0.0.1" id -u 2>"$root/tmp/ssh-$mode.err")"
  now_ms
  login_ms=$((NOW - t0))
  [[ "$got" == "$want" ]] ||
    fail "ssh $user@ ($mode sshd) printed '$got', not $want: $(cat "$root/tmp/ssh-$mode.err") sshd: $(cat "$root/tmp/sshd-$mode.log")"
  kill "$SSHD_PID"
  wait "$SSHD_PID" 2>/dev/null
  SSHD_PID=
  echo "sshd as $mode: start -> accepting $ms ms; ssh login + id -u ($want) $login_ms ms"
}

inner() {
  ROOT="$1"
  local sshd_dir="$2" root="$1"
  SSHD_PID=
  trap 'kill_pids ${SSHD_PID:+"$SSHD_PID"}' EXIT
  ip link set lo up || fail "cannot bring up loopback in the test's network namespace"
  # Nothing is written into the shared cached root: a tmpfs over its /tmp holds the binaries, keys, configs
  # and logs; passwd and group get uid 1000 by bind mounts of copies (all private to this mount namespace).
  mount -t tmpfs -o mode=1777 tmpfs "$root/tmp" || fail "cannot mount a tmpfs on $root/tmp"
  mount -t proc proc "$root/proc" || fail "cannot mount /proc in $root"
  mkdir -p "$root/tmp/k8s-agent" "$root/tmp/client" "$root/tmp/home-mpiuser" "$root/tmp/etc"
  cp "$sshd_dir"/{sshd,sshd-session,sshd-auth,ssh-keygen} "$root/tmp/k8s-agent/"
  chown 1000:1000 "$root/tmp/home-mpiuser"
  { cat "$root/etc/passwd"; echo "mpiuser:x:1000:1000::/tmp/home-mpiuser:/bin/sh"; } >"$root/tmp/etc/passwd"
  { cat "$root/etc/group"; echo "mpiuser:x:1000:"; } >"$root/tmp/etc/group"
  mount --bind "$root/tmp/etc/passwd" "$root/etc/passwd" || fail "cannot bind-mount passwd"
  mount --bind "$root/tmp/etc/group" "$root/etc/group" || fail "cannot bind-mount group"
  ssh-keygen -q -t ed25519 -N '' -C client -f "$root/tmp/client/id_ed25519" || fail "host ssh-keygen"
  run_sshd root 0:0 root 0
  run_sshd uid1000 1000:1000 mpiuser 1000
  echo "PASS"
}

if [[ "${1:-}" == --inner ]]; then
  inner "$2" "$3"
  exit $?
fi

# ---- outside ----
if [[ "${1:-OFF}" == ON ]]; then
  skip "sanitizer build (this test runs no code of the agent)"
fi
if [[ $EUID -ne 0 ]]; then
  skip "needs root (chroot, mount and network namespaces)"
fi
if ! unshare --mount --net --propagation private true 2>/dev/null; then
  skip "cannot make a mount + network namespace here (unshare refused: a container without CAP_SYS_ADMIN?)"
fi
[[ -x /usr/bin/ssh && -x /usr/bin/ssh-keygen ]] || skip "the host's OpenSSH client is missing (apt-get install openssh-client, or scripts/deps.sh)"
SSHD_BUILD="$SRC/scripts/sshd_build.sh"
MINBASE="$SRC/tests/bed/minbase_root.sh"
# shellcheck source=scripts/lib/cache.sh
source "$SRC/scripts/lib/cache.sh"
budget="${K8S_SSHD_BUILD_BUDGET:-900}"
t0=$SECONDS
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
# ensure_cached NAME SCRIPT: cached, or built within what is left of the budget, or skip.
ensure_cached() {
  local name="$1" script="$2" rc left
  if "$script" check 2>/dev/null; then
    echo "$name cached in $("$script" path) (cold build: $(cat "$("$script" path)/.build-seconds" 2>/dev/null || echo '?') s)"
    return 0
  fi
  if [[ "${K8S_SSHD_BUILD:-1}" != 1 ]]; then
    skip "$name not built and K8S_SSHD_BUILD=0. Build it once, as root, with '$script ensure'" \
      "(1-5 min cold), or unset K8S_SSHD_BUILD."
  fi
  left=$((budget - (SECONDS - t0)))
  local b0=$SECONDS
  cache_run_budgeted "$left" "$out" "$script" ensure
  rc=$?
  case $rc in
  0) echo "built $name $(cat "$out") in $((SECONDS - b0)) s" ;;
  124)
    skip "building $name took over the $budget s left of K8S_SSHD_BUILD_BUDGET and was stopped;" \
      "the next run starts it again."
    ;;
  77)
    skip "$name cannot be built here (see above)"
    ;;
  *) fail "building $name failed (exit $rc)" ;;
  esac
}
ensure_cached "the portable sshd" "$SSHD_BUILD"
ensure_cached "the minbase root" "$MINBASE"
"$SSHD_BUILD" check || fail "sshd_build.sh check"
sshd_dir="$("$SSHD_BUILD" path)"
for b in sshd sshd-session sshd-auth ssh-keygen; do
  printf '%s: %s bytes stripped, newest symbol %s\n' "$b" "$(stat -c %s "$sshd_dir/$b")" \
    "$(objdump -T "$sshd_dir/$b" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n1)"
done
"$sshd_dir/sshd" -V 2>&1
root="$("$MINBASE" path)"
exec unshare --mount --net --propagation private "$0" --inner "$root" "$sshd_dir"
