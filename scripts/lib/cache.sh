# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared steps of the one-time builds cached under /var/cache/k8s-agent (scripts/third_party.sh,
# scripts/sshd_build.sh, tests/bed/ompi5_root.sh, tests/bed/minbase_root.sh, tests/realapi/apiserver_build.sh).
# Sourced; the caller defines log().
# Sources lib/apt_mirror.sh (the Debian mirror) beside it.
#
# Each caller keeps its own recipe, cache key, stamp and completeness check; these functions hold what makes a
# cache safe to share (and cache_ensure_root the whole `ensure` of the two debootstrapped builds): one exclusive flock per cache name, temporary build dirs on the same file system as the
# final name (so the last step is a rename), leftovers of killed builds swept under the lock, and a broken
# entry of the same recipe moved aside before the rename (rename cannot replace a non-empty directory).
#   DIR   the cache directory (the parent of every entry)
#   NAME  the cache's name: DIR/NAME.lock, DIR/.build-NAME.* temporaries

# shellcheck source=scripts/lib/apt_mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt_mirror.sh"

# cache_lock DIR NAME SECONDS: waits at most SECONDS for the exclusive lock. The lock is held by an fd of the
# calling shell, so until that shell exits.
cache_lock() {
  local dir="$1" name="$2" wait="$3" fd
  exec {fd}>"$dir/$name.lock" || return 1
  if ! flock -w "$wait" "$fd"; then
    log "lock $dir/$name.lock busy for $((wait / 60)) min"
    return 1
  fi
}

# cache_sweep DIR NAME: under the lock any temporary dir (or its log) is a leftover of a killed or failed build.
cache_sweep() {
  local dir="$1" name="$2" t
  for t in "$dir/.build-$name".*; do
    if [[ -d "$t" ]]; then
      rm -rf --one-file-system "$t"
    elif [[ -f "$t" ]]; then
      rm -f "$t"
    fi
  done
}

# cache_mktemp DIR NAME: prints a new temporary build dir beside the final entries (world-readable, as they are).
cache_mktemp() {
  local t
  t="$(mktemp -d "$1/.build-$2.XXXXXX")" || return 1
  chmod 755 "$t" && printf '%s\n' "$t"
}

# cache_install FROM TO NAME: renames the finished build FROM to its final name TO (in the same DIR), moving a
# broken TO of the same recipe aside first.
cache_install() {
  local from="$1" to="$2" name="$3" old
  if [[ -e "$to" ]]; then
    old="$(dirname "$to")/.build-$name.broken.$$"
    mv "$to" "$old" && rm -rf --one-file-system "$old"
  fi
  mv "$from" "$to"
}

# cache_mirror_reachable URL SUITE: can the Debian mirror be reached at all? Tells "skip" (no network) from
# "fail" (a real build error).
cache_mirror_reachable() {
  curl -sSf --max-time 20 -o /dev/null "$1/dists/$2/Release" 2>/dev/null
}

# cache_ensure_root DIR NAME SECONDS FINAL SUITE WHAT CHECK BUILD: the whole `ensure` of an entry built
# as root with debootstrap from a Debian mirror (tests/bed/ompi5_root.sh, tests/realapi/apiserver_build.sh).
# Prints FINAL (DIR/...), building it first under the lock (waiting at most SECONDS for it) unless `CHECK
# FINAL` says it is complete. `BUILD TMP MIRROR` builds into a temporary dir with its output going to the
# log, and writes the stamp that CHECK reads last; WHAT names the entry and how long a build takes in the
# messages. The mirror (lib/apt_mirror.sh) is looked up only when a build is needed, and is not part of
# the entry's key: the same suite and packages from any mirror make the same root (only the sources.list
# debootstrap writes differs, and nothing runs apt in these roots once built).
# Exit: 0 ok, 1 failure (log kept), 77 it must be built but cannot be here (no debootstrap, no Debian
# mirror known, or the mirror is unreachable, before or during the build).
cache_ensure_root() {
  local dir="$1" name="$2" wait="$3" final="$4" suite="$5" what="$6" check="$7" build="$8"
  local t rc t0 mirror
  [[ $EUID -eq 0 ]] || {
    log "needs root"
    return 1
  }
  mkdir -p "$dir" || return 1
  cache_lock "$dir" "$name" "$wait" || return 1
  if "$check" "$final"; then
    printf '%s\n' "$final"
    return 0
  fi
  cache_sweep "$dir" "$name"
  command -v debootstrap >/dev/null || {
    log "debootstrap missing (apt-get install debootstrap): cannot build ${what%% (*}"
    return 77
  }
  mirror="$(apt_mirror)" || return 77
  if ! cache_mirror_reachable "$mirror" "$suite"; then
    log "Debian mirror $mirror unreachable (no network?): cannot build ${what%% (*}"
    return 77
  fi
  t="$(cache_mktemp "$dir" "$name")" || return 1
  log "building $what in $t (log $t.log)"
  t0=$SECONDS
  "$build" "$t" "$mirror" >"$t.log" 2>&1
  rc=$?
  if ((rc != 0)) || ! "$check" "$t"; then
    tail -n 25 "$t.log" >&2
    rm -rf --one-file-system "$t"
    if ! cache_mirror_reachable "$mirror" "$suite"; then
      log "Debian mirror $mirror became unreachable during the build"
      rm -f "$t.log"
      return 77
    fi
    log "building ${what%% (*} failed (exit $rc); log kept in $t.log"
    return 1
  fi
  mv "$t.log" "$t/.build.log"
  cache_install "$t" "$final" "$name" || return 1
  log "built $final in $((SECONDS - t0)) s"
  printf '%s\n' "$final"
}

# cache_run_budgeted SECONDS OUT CMD...: runs CMD (a cache's `ensure`) with its stdout in the file OUT, in
# its own session and process group, so that past SECONDS the whole build (apt, debootstrap, make) is
# stopped with it: TERM, then KILL 5 s later. Returns CMD's status, or 124 when the budget ran out (tests
# print a skip then: the next run starts the build again, a cache is never left half built).
cache_run_budgeted() {
  local budget="$1" out="$2" t0=$SECONDS pid rc
  shift 2
  setsid "$@" >"$out" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS - t0 > budget)); then
      kill -TERM -- "-$pid" 2>/dev/null
      for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -KILL -- "-$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      return 124
    fi
    sleep 1
  done
  wait "$pid"
  rc=$?
  return "$rc"
}
