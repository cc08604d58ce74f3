# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared steps of the one-time builds cached under /var/cache/k8s-agent (scripts/third_party.sh,
# tests/bed/ompi5_root.sh, tests/realapi/apiserver_build.sh). Sourced; the caller defines log().
#
# Each caller keeps its own recipe, cache key, stamp and completeness check; these functions hold what makes a
# cache safe to share: one exclusive flock per cache name, temporary build dirs on the same file system as the
# final name (so the last step is a rename), leftovers of killed builds swept under the lock, and a broken
# entry of the same recipe moved aside before the rename (rename cannot replace a non-empty directory).
#   DIR   the cache directory (the parent of every entry)
#   NAME  the cache's name: DIR/NAME.lock, DIR/.build-NAME.* temporaries

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
