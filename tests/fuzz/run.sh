#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets with clang (ASan+UBSan) in build-fuzz, runs
# each for a bounded time, merges what it found and writes the figures.
#
#   tests/fuzz/run.sh [--minutes N | --seconds N] [--jobs N]
#                     [--results FILE] [--update-corpus] [TARGET...]
#   tests/fuzz/run.sh SECONDS [TARGET...]          (the older form)
#
# Defaults: 10 s per target, one at a time, every target. Each fuzzer runs
# under `nice -n ${FUZZ_NICE:-10}` with -rss_limit_mb=2048 -timeout=10,
# starting from build-fuzz/corpus/<t> (kept between runs) plus the seed
# corpus tests/fuzz/corpus/<t>, which is read, never written, unless
# --update-corpus is given: then the inputs that add edges to the seed
# corpus (a set-cover merge, so a small set) are copied into it, named by
# their SHA-1 as libFuzzer names them.
#
# Results: one Markdown table row per target (executions, exec/s, cov, ft,
# corpus sizes, crashes, timeouts, OOMs, load average) appended to FILE
# (default build-fuzz/results.md); full logs in build-fuzz/fuzz_<t>.log.
# A crash, timeout, OOM or leak leaves its input in build-fuzz/artifacts/<t>/
# and makes the exit status 1: fix it, then copy the input into
# tests/fuzz/corpus/<t>/ so ctest fuzz.smoke replays it from then on.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${K8S_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
ALL=(watch_decoder pod_json kubeconfig ssh_config known_hosts options
     kex_offer trace_report)
SECONDS_EACH=10
PARALLEL=1
RESULTS=$BUILD/results.md
UPDATE_CORPUS=0
TARGETS=()

usage() { sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) SECONDS_EACH=$(( $2 * 60 )); shift 2 ;;
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --jobs) PARALLEL=$2; shift 2 ;;
    --results) RESULTS=$2; shift 2 ;;
    --update-corpus) UPDATE_CORPUS=1; shift ;;
    -h|--help) usage ;;
    -*) echo "run.sh: unknown option $1" >&2; usage ;;
    *)
      if [ ${#TARGETS[@]} -eq 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
        SECONDS_EACH=$1
      else
        TARGETS+=("$1")
      fi
      shift ;;
  esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL[@]}")
for t in "${TARGETS[@]}"; do
  [ -d "$ROOT/tests/fuzz/corpus/$t" ] || { echo "run.sh: no target $t" >&2; exit 2; }
done

CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -DK8S_AGENT_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j"${JOBS:-2}" --target "${TARGETS[@]/#/fuzz_}"

# Runs one fuzzer with the environment its target needs.
fuzzer() {
  local t=$1; shift
  # libssh2 1.10 leaked an HMAC_CTX per hashed known_hosts check (its bug;
  # ~100 bytes once per connection; tests/lsan.supp says why the
  # suppression stays with 1.11.1). Suppressing it needs
  # full malloc stacks, since libcrypto has no frame pointers.
  local asan=${ASAN_OPTIONS:-}
  [ "$t" = known_hosts ] && asan="fast_unwind_on_malloc=0${asan:+:$asan}"
  ASAN_OPTIONS="$asan" \
    LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
    nice -n "${FUZZ_NICE:-10}" "$BUILD/tests/fuzz/fuzz_$t" "$@"
}

# The last value of `key: N` on libFuzzer's status lines in a log.
last_field() { grep -oE "$2: [0-9]+" "$1" | tail -1 | grep -oE '[0-9]+$' || echo "?"; }
final_stat() { sed -n "s/^stat::$2: *//p" "$1" | tail -1; }
count() { find "$1" -maxdepth 1 -type f -name "$2" | wc -l; }
# Files matching $2 in $1 written after the file $3 (this run's artifacts).
count_new() { find "$1" -maxdepth 1 -type f -name "$2" -newer "$3" | wc -l; }

# Fuzzes, merges and summarizes one target; prints its table row.
run_one() {
  local t=$1
  local work=$BUILD/corpus/$t seed=$ROOT/tests/fuzz/corpus/$t
  local art=$BUILD/artifacts/$t log=$BUILD/fuzz_$t.log rc=0
  mkdir -p "$work" "$art"
  local stamp=$BUILD/start_$t
  : >"$stamp"
  local seed_before; seed_before=$(count "$seed" '*')
  local load_start; load_start=$(uptime | sed 's/.*load average: //')
  fuzzer "$t" -max_total_time="$SECONDS_EACH" -max_len=65536 \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$art/" "$work" "$seed" >"$log" 2>&1 || rc=$?
  local load_end; load_end=$(uptime | sed 's/.*load average: //')

  # A set-cover merge of what was found into a copy of the seed corpus:
  # the files it adds are the fewest inputs that reach the new edges
  # (without counters: with hit-count buckets a 10-minute run adds
  # hundreds of files per target for little more code reached).
  local merged=$BUILD/merged/$t
  rm -rf "$merged"; mkdir -p "$merged"
  cp "$seed"/* "$merged"/
  fuzzer "$t" -set_cover_merge=1 -use_counters=0 -max_len=65536 -rss_limit_mb=2048 \
    -timeout=10 "$merged" "$work" >"$BUILD/merge_$t.log" 2>&1 || true
  local added; added=$(( $(count "$merged" '*') - seed_before ))
  local adds="+$added"
  if [ "$UPDATE_CORPUS" = 1 ]; then
    local f
    for f in "$merged"/*; do
      [ -e "$seed/$(basename "$f")" ] || cp "$f" "$seed/"
    done
    adds="$adds → $(count "$seed" '*')"
  fi

  local crashes timeouts ooms leaks
  crashes=$(count_new "$art" 'crash-*' "$stamp"); timeouts=$(count_new "$art" 'timeout-*' "$stamp")
  ooms=$(count_new "$art" 'oom-*' "$stamp"); leaks=$(count_new "$art" 'leak-*' "$stamp")
  local execs; execs=$(final_stat "$log" number_of_executed_units)
  local eps; eps=$(final_stat "$log" average_exec_per_sec)
  local rss; rss=$(final_stat "$log" peak_rss_mb)
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s/%s/%s/%s | %s MB | %s | %s |\n' \
    "$t" "$SECONDS_EACH" "${execs:-?}" "${eps:-?}" "$(last_field "$log" cov)" \
    "$(last_field "$log" ft)" "$(count "$work" '*')" "$seed_before" \
    "$adds" \
    "$crashes" "$timeouts" "$ooms" "$leaks" "${rss:-?}" "$load_start" "$load_end" \
    >"$BUILD/row_$t.md"
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: fuzz_$t exited $rc; see $log and $art/" >&2
    grep -E '^==[0-9]+==ERROR|^SUMMARY|runtime error|^artifact_prefix|Test unit written' \
      "$log" | head -20 >&2
    return 1
  fi
}

mkdir -p "$(dirname "$RESULTS")"
if [ ! -s "$RESULTS" ]; then
  {
    echo "| target | s | executions | exec/s | cov | ft | work corpus | seed | merge adds (→ seed) | crash/timeout/oom/leak | peak RSS | load start | load end |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  } >"$RESULTS"
fi
echo "== $(date -u +%FT%TZ): ${#TARGETS[@]} target(s), ${SECONDS_EACH}s each, $PARALLEL at a time on $(nproc) cores"
status=0 ended=
declare -A pids=()
for t in "${TARGETS[@]}"; do
  while [ "${#pids[@]}" -ge "$PARALLEL" ]; do
    # -p: the job whose status this is, so no other ending job is dropped.
    wait -n -p ended || status=1
    unset "pids[$ended]"
  done
  echo "== fuzz_$t for ${SECONDS_EACH}s"
  run_one "$t" & pids[$!]=$t
done
for p in "${!pids[@]}"; do wait "$p" || status=1; done
for t in "${TARGETS[@]}"; do
  if [ -f "$BUILD/row_$t.md" ]; then
    tee -a "$RESULTS" <"$BUILD/row_$t.md"
    rm -f "$BUILD/row_$t.md"
  fi
done
echo "results: $RESULTS"
exit $status
