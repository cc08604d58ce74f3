#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tests' one sshd: OpenSSH's sshd on 127.0.0.1 with keys and a config
# of its own, on a port reserved for it. The shell tests source this file
# (the sshd is then their own child); the C++ SshdFixture runs it as a
# command (tests/integration/ssh/sshd_fixture.cc):
#
#   sshd_harness_init DIR [--host-key TYPE] [--user-key TYPE]
#                         [--login-user NAME] [--config LINE]...
#       DIR/host_TYPE(.pub), DIR/id_TYPE(.pub) (TYPE as ssh-keygen's -t and
#       -b: ed25519, ecdsa-384, rsa-3072; ed25519 by default), the user key
#       in DIR/authorized_keys, DIR/port (reserved, see below) and
#       DIR/sshd_config: the LINEs first (sshd keeps an option's first
#       value), then the harness's own. As root, --login-user NAME adds a
#       user that exists only for this sshd (DIR/passwd and DIR/group,
#       bind-mounted in its mount namespace); DIR/user names the user the
#       user key logs in as.
#   sshd_harness_start DIR [--may-move]
#       Starts `sshd -D -e` (log appended to DIR/sshd.log, pid in
#       DIR/sshd.pid) and returns once that pid listens on the port, or
#       fails with the log. --may-move: nobody knows the port yet, so if
#       another process took it, move to a new one (DIR/port) and retry.
#   sshd_harness_signal DIR SIGNAL   # sshd and every process under it
#   sshd_harness_stop DIR            # SIGKILL all of them; waits until gone
#   sshd_harness_release DIR         # stop, and give the port up
#   (as a command: sshd_harness.sh init|start|signal|stop|release DIR ...)
#
# The port: a holder process keeps a socket bound to it (SO_REUSEADDR, not
# listening) from init to release. sshd (SO_REUSEADDR too) binds and
# listens beside it, on every start and restart, while neither another
# bind to port 0 nor a connect's local port can be given it. Only a
# process that bound the port by number can still take it (one that
# learnt it before the holder had it): that is the lost port --may-move
# retries. The holder ends with its owner (SSHD_HARNESS_OWNER: by default
# the sourcing shell, or the command's parent), if nobody released it.
#
# As root, sshd runs in a private mount namespace that hides the user's
# ~/.bashrc (pyenv init costs up to ~0.6 s per remote command) and holds
# the --login-user files. Every process is told apart by pid and start
# time (never by name), so a pid reused after an exit is never signalled.

SSHD_HARNESS_SSHD=${SSHD_HARNESS_SSHD:-/usr/sbin/sshd}
# Bounds on each wait (a hang fails instead of blocking forever); every
# wait ends as soon as its condition holds.
SSHD_HARNESS_WAIT_S=${SSHD_HARNESS_WAIT_S:-30}
# A uid no real account uses, for --login-user.
SSHD_HARNESS_LOGIN_UID=47213

_sshd_harness_error() { echo "sshd_harness: $*" >&2; }

# The state and start time (fields 3 and 22 of /proc/PID/stat) of PID in
# _SSHD_HARNESS_STATE and _SSHD_HARNESS_T: with its pid, the start time
# names one process. Fails once the pid is gone. (Builtins only: the
# waits below call it in a loop, and a fork costs tens of ms on a loaded
# machine.)
_sshd_harness_stat() {
  local line fields
  { read -r line < "/proc/$1/stat"; } 2>/dev/null || return 1
  read -r -a fields <<< "${line##*) }"
  _SSHD_HARNESS_STATE=${fields[0]}
  _SSHD_HARNESS_T=${fields[19]}
}

# Whether DIR/NAME.pid and DIR/NAME.start still name a live process (not
# a zombie); sets _SSHD_HARNESS_PID.
_sshd_harness_alive() {
  local dir=$1 name=$2 pid start
  { read -r pid < "$dir/$name.pid" && read -r start < "$dir/$name.start"; } 2>/dev/null || return 1
  _sshd_harness_stat "$pid" || return 1
  [ "$_SSHD_HARNESS_T" = "$start" ] && [ "$_SSHD_HARNESS_STATE" != Z ] || return 1
  _SSHD_HARNESS_PID=$pid
}

# Records the job just started as DIR/NAME.pid and .start. It is disowned:
# this shell still reaps it, without a notice ("Killed") on its stderr.
_sshd_harness_record() {
  local dir=$1 name=$2 pid=$!
  disown "$pid" 2>/dev/null
  echo "$pid" > "$dir/$name.pid"
  _sshd_harness_stat "$pid" || _SSHD_HARNESS_T=
  echo "$_SSHD_HARNESS_T" > "$dir/$name.start"
}

# Runs CMD... (a condition) until it holds, or the wait's bound passes.
_sshd_harness_until() {
  local end=$((SECONDS + SSHD_HARNESS_WAIT_S))
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.02
  done
}

_sshd_harness_not_alive() { ! _sshd_harness_alive "$1" "$2"; }

# Kills DIR/NAME's process (if it still is that process) and waits until
# it is gone, or a zombie its parent will reap: this shell reaps its own
# children; as a command, the C++ fixture, their subreaper, does.
_sshd_harness_kill() {
  local dir=$1 name=$2 pid
  _sshd_harness_alive "$dir" "$name" || return 0
  pid=$_SSHD_HARNESS_PID
  kill -KILL "$pid" 2>/dev/null
  _sshd_harness_until _sshd_harness_not_alive "$dir" "$name" ||
    { _sshd_harness_error "$name (pid $pid) did not end"; return 1; }
}

# Keygen TYPE PATH COMMENT: an unencrypted key pair, TYPE as in init.
_sshd_harness_keygen() {
  local type=$1 path=$2 comment=$3
  local args=(-t "${type%%-*}")
  [ "$type" = "${type%%-*}" ] || args+=(-b "${type#*-}")
  ssh-keygen -q -N '' -C "$comment" -f "$path" "${args[@]}" < /dev/null
}

# Reserves a free port for DIR: starts the holder, waits for DIR/port.
_sshd_harness_reserve() {
  local dir=$1 owner=${SSHD_HARNESS_OWNER:-$$}
  rm -f "$dir/port"
  /usr/bin/python3 -c '
import os, select, socket, sys
port_file, owner = sys.argv[1], int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
owner_fd = os.pidfd_open(owner)  # Readable once the owner has exited.
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(port_file + ".tmp", port_file)
select.select([owner_fd], [], [])' "$dir/port" "$owner" \
    < /dev/null > /dev/null 2>> "$dir/holder.log" &
  _sshd_harness_record "$dir" holder
  if ! _sshd_harness_until _sshd_harness_reserved "$dir" || [ ! -s "$dir/port" ]; then
    _sshd_harness_error "no port reserved: $(cat "$dir/holder.log" 2>/dev/null)"
    _sshd_harness_kill "$dir" holder
    return 1
  fi
}
# Reserved: DIR/port is written; or the holder has exited (it failed).
_sshd_harness_reserved() { [ -s "$1/port" ] || ! _sshd_harness_alive "$1" holder; }

# --login-user NAME: passwd and group copies with NAME added (home DIR),
# bind-mounted over /etc's in sshd's mount namespace (DIR/mounts).
_sshd_harness_login_user() {
  local dir=$1 name=$2 id=$SSHD_HARNESS_LOGIN_UID f
  { cat /etc/passwd; echo "$name:x:$id:$id:sshd harness:$dir:/bin/sh"; } > "$dir/passwd" &&
    { cat /etc/group; echo "$name:x:$id:"; } > "$dir/group" || return 1
  # sshd reads authorized_keys as the user, from its home.
  for f in "" /passwd /group /authorized_keys; do chmod 755 "$dir$f" || return 1; done
  printf '%s %s\n' "$dir/passwd" /etc/passwd "$dir/group" /etc/group >> "$dir/mounts"
  echo "$name" > "$dir/user"
}

sshd_harness_init() {
  local dir=$1 host=ed25519 user=ed25519 login='' config=()
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --host-key) host=$2 ;;
      --user-key) user=$2 ;;
      --login-user) login=$2 ;;
      --config) config+=("$2") ;;
      *) _sshd_harness_error "init: unknown option $1"; return 1 ;;
    esac
    shift 2 || { _sshd_harness_error "init: $1 needs a value"; return 1; }
  done
  mkdir -p "$dir" || return 1
  : > "$dir/mounts"
  id -un > "$dir/user" || return 1
  _sshd_harness_keygen "$host" "$dir/host_$host" sshd-harness-host &&
    _sshd_harness_keygen "$user" "$dir/id_$user" sshd-harness-user &&
    cp "$dir/id_$user.pub" "$dir/authorized_keys" || return 1
  if [ -n "$login" ] && [ "$(id -u)" = 0 ]; then
    _sshd_harness_login_user "$dir" "$login" || return 1
  fi
  _sshd_harness_reserve "$dir" || return 1
  {
    [ ${#config[@]} -eq 0 ] || printf '%s\n' "${config[@]}"
    cat <<CFG
Port $(cat "$dir/port")
ListenAddress 127.0.0.1
HostKey $dir/host_$host
PidFile none
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AuthorizedKeysFile $dir/authorized_keys
UseDNS no
CFG
  } > "$dir/sshd_config"
}

# Whether pid PID holds the socket listening on 127.0.0.1:PORT (another
# process's listener there is not this sshd's).
_sshd_harness_listening() {
  local pid=$1 port=$2 inode fd
  inode=$(awk -v a="$(printf '0100007F:%04X' "$port")" \
    '$2 == a && $4 == "0A" { print $10; exit }' /proc/net/tcp) || return 1
  [ -n "$inode" ] || return 1
  for fd in /proc/"$pid"/fd/*; do
    [ "$(readlink "$fd" 2>/dev/null)" = "socket:[$inode]" ] && return 0
  done
  return 1
}
# Ready: sshd says it listens on PORT, in the log from byte FROM on (a
# restart appends to the same log); or it has exited (the caller reads
# why). Builtins only, as _sshd_harness_stat.
_sshd_harness_ready() {
  local dir=$1 port=$2 from=$3 LC_ALL=C text=''
  _sshd_harness_alive "$dir" sshd || return 0
  { read -r -d '' text < "$dir/sshd.log"; } 2>/dev/null
  [[ ${text:$from} == *"Server listening on 127.0.0.1 port $port."* ]]
}

# Spawns sshd once on DIR/port, in its own session (the caller's signals
# stay apart) and, as root, its own mount namespace. The background job is
# sshd itself (setsid, unshare and sh exec it), so its pid is sshd's.
_sshd_harness_spawn() {
  local dir=$1 script="" from to bashrc
  bashrc="$(getent passwd "$(id -u)" | cut -d: -f6)/.bashrc"
  if [ "$(id -u)" = 0 ] && [ -e "$bashrc" ]; then
    : > "$dir/empty_bashrc"
    script="mount --bind $dir/empty_bashrc $bashrc && "
  fi
  while read -r from to; do script+="mount --bind $from $to && "; done < "$dir/mounts"
  mkdir -p /run/sshd 2>/dev/null  # The privilege separation dir.
  if [ -n "$script" ] && [ -x /usr/bin/unshare ]; then
    setsid /usr/bin/unshare --mount /bin/sh -c \
      "${script}exec $SSHD_HARNESS_SSHD -D -e -f $dir/sshd_config" \
      >> "$dir/sshd.log" 2>&1 < /dev/null &
  else
    setsid "$SSHD_HARNESS_SSHD" -D -e -f "$dir/sshd_config" \
      >> "$dir/sshd.log" 2>&1 < /dev/null &
  fi
  _sshd_harness_record "$dir" sshd
}

# Moves DIR to a newly reserved port (the old one was taken).
_sshd_harness_move() {
  local dir=$1 old
  old=$(cat "$dir/port")
  _sshd_harness_kill "$dir" holder && _sshd_harness_reserve "$dir" || return 1
  sed -i "s/^Port $old\$/Port $(cat "$dir/port")/" "$dir/sshd_config"
}

sshd_harness_start() {
  local dir=$1 may_move=0 attempt port from log pid
  [ "${2:-}" = --may-move ] && may_move=1
  if _sshd_harness_alive "$dir" sshd; then return 0; fi
  for attempt in 1 2 3 4 5; do
    port=$(cat "$dir/port") || return 1
    from=$(wc -c 2>/dev/null < "$dir/sshd.log" || echo 0)
    _sshd_harness_spawn "$dir"
    if ! _sshd_harness_until _sshd_harness_ready "$dir" "$port" "$from"; then
      log=$(tail -c +"$((from + 1))" "$dir/sshd.log")
      _sshd_harness_kill "$dir" sshd
      _sshd_harness_error "sshd did not listen on 127.0.0.1 port $port within ${SSHD_HARNESS_WAIT_S} s: $log"
      return 1
    fi
    # It said so after its listen(): the socket must be its own.
    if _sshd_harness_alive "$dir" sshd; then
      pid=$_SSHD_HARNESS_PID
      _sshd_harness_listening "$pid" "$port" && return 0
      _sshd_harness_kill "$dir" sshd
      _sshd_harness_error "sshd (pid $pid) logged that it listens, but holds no socket listening on 127.0.0.1 port $port"
      return 1
    fi
    log=$(tail -c +"$((from + 1))" "$dir/sshd.log")
    if [ $may_move = 1 ] && [ $attempt -lt 5 ] &&
        grep -q 'Address already in use' <<< "$log"; then
      _sshd_harness_move "$dir" || return 1
      continue
    fi
    grep -q 'Address already in use' <<< "$log" &&
      log+=" (another process took port $port: $(ss -Htlnp "sport = :$port" 2>/dev/null))"
    _sshd_harness_error "sshd exited: $log"
    return 1
  done
}

# The pids of sshd and of every process under it.
_sshd_harness_tree() {
  local tree=("$1") i=0 kid
  while [ $i -lt ${#tree[@]} ]; do
    for kid in $(pgrep -P "${tree[$i]}"); do tree+=("$kid"); done
    i=$((i + 1))
  done
  echo "${tree[@]}"
}

sshd_harness_signal() {
  local dir=$1 sig=$2 p
  _sshd_harness_alive "$dir" sshd || { _sshd_harness_error "sshd is not running"; return 1; }
  for p in $(_sshd_harness_tree "$_SSHD_HARNESS_PID"); do kill -"$sig" "$p" 2>/dev/null; done
  return 0
}

sshd_harness_stop() {
  local dir=$1 tree p
  _sshd_harness_alive "$dir" sshd || return 0
  tree=$(_sshd_harness_tree "$_SSHD_HARNESS_PID")
  # A stopped process dies of SIGKILL too; SIGCONT is for its children
  # that were already reparented.
  for p in $tree; do kill -KILL "$p" 2>/dev/null; done
  for p in $tree; do kill -CONT "$p" 2>/dev/null; done
  _sshd_harness_kill "$dir" sshd
}

sshd_harness_release() {
  local dir=$1
  sshd_harness_stop "$dir"
  _sshd_harness_kill "$dir" holder
}

# As a command: sshd_harness.sh SUBCOMMAND DIR [ARGS...]; the holder's
# owner is the caller (the C++ test process), not this short-lived shell.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -u
  SSHD_HARNESS_OWNER=${SSHD_HARNESS_OWNER:-$PPID}
  case ${1:-} in
    init|start|signal|stop|release) cmd=$1; shift; "sshd_harness_$cmd" "$@" ;;
    *) echo "usage: $0 init|start|signal|stop|release DIR [ARGS...]" >&2; exit 2 ;;
  esac
fi
