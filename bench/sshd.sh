#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The workers' sshd side by side: k8s-agent-sshd running the portable sshd (Debian 13's OpenSSH
# 10.0, scripts/sshd_build.sh) against Debian 12's packaged sshd (OpenSSH 9.2), in one run, in a network
# namespace of its own (loopback only), with the same job keys and the config k8s-agent-sshd writes:
#   1 start -> accepting   fork to the first accepted TCP connection, RUNS starts each: k8s-agent-sshd
#                          (portable), k8s-agent-sshd --sshd /usr/sbin/sshd, and Debian's sshd alone on
#                          the same config written beforehand (no entry in front)
#   2 launch               `ssh -p PORT root@127.0.0.1 true` with OpenSSH's client, hyperfine, against
#                          each server, with the same kex (curve25519-sha256) and with ssh's default
#   3 idle memory          8 attached sessions running `sleep` per server: PSS of the server's
#                          processes for them (listener excluded), per session
# usage: sudo bench/sshd.sh [--runs N] [--out FILE]   (default 20 runs; bench/results/sshd.md)
# Needs root, the build (build/launcher/k8s-agent-sshd), hyperfine (installed if missing).
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$BENCH_DIR/.." && pwd)"
PY=/usr/bin/python3
RUNS=20
OUT="$BENCH_DIR/results/sshd.md"
while (($#)); do
  case "$1" in
  --runs) RUNS="$2"; shift ;;
  --out) OUT="$2"; shift ;;
  *) sed -n '3,14p' "$0" >&2; exit 2 ;;
  esac
  shift
done
[[ $EUID -eq 0 ]] || { echo "bench/sshd.sh: needs root (network namespace)" >&2; exit 1; }
ENTRY="$REPO/build/launcher/k8s-agent-sshd"
[[ -x "$ENTRY" ]] || { echo "bench/sshd.sh: build first (no $ENTRY)" >&2; exit 1; }
command -v hyperfine >/dev/null || apt-get -o DPkg::Lock::Timeout=600 install -y -q hyperfine >/dev/null
PORTABLE="$(bash "$REPO/scripts/sshd_build.sh" ensure)"
DEBIAN_SSHD=/usr/sbin/sshd

tmp="$(mktemp -d /tmp/k8s-bench-sshd.XXXXXX)"
ns="k8s-bench-sshd-$$"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up
in_ns() { ip netns exec "$ns" "$@"; }

mkdir -p "$tmp/keys" "$tmp/t"
ssh-keygen -q -t ed25519 -N '' -C bench-user -f "$tmp/keys/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -C bench-host -f "$tmp/keys/ssh_host_ed25519_key"
printf '[127.0.0.1]:* %s\n' "$(cut -d' ' -f1,2 "$tmp/keys/ssh_host_ed25519_key.pub")" >"$tmp/known_hosts"
ssh_cmd() {  # PORT [ssh options...]: the client command line, as words
  local port="$1"
  shift
  echo "ssh -n -p $port -l root -i $tmp/keys/id_ed25519 -o IdentitiesOnly=yes -o BatchMode=yes" \
    "-o UserKnownHostsFile=$tmp/known_hosts -o StrictHostKeyChecking=yes $* 127.0.0.1"
}

# --- 1: start -> accepting
start_runs() {  # LABEL PORT PIDFILE CMD...
  local label="$1" port="$2" pidfile="$3"
  shift 3
  in_ns env -i PATH=/usr/bin:/bin TMPDIR="$tmp/t" "$PY" "$BENCH_DIR/lib/start_to_accept.py" "$RUNS" "$port" \
    "$pidfile" -- "$@" >"$tmp/start-$label.txt"
}
echo "1/3 start -> accepting, $RUNS starts each" >&2
start_runs portable 2401 - "$ENTRY" --port 2401 --keys "$tmp/keys"
start_runs entry-debian 2402 - "$ENTRY" --port 2402 --keys "$tmp/keys" --sshd "$DEBIAN_SSHD"
# Debian's sshd alone, on the config k8s-agent-sshd wrote for it (so only the entry's own cost differs).
in_ns env TMPDIR="$tmp/t" "$ENTRY" --port 2403 --keys "$tmp/keys" --sshd "$DEBIAN_SSHD" \
  --run-dir "$tmp/debian-run" >"$tmp/debian-run.log" 2>&1 &
pids+=($!)
until [[ -s "$tmp/debian-run/sshd.pid" ]]; do sleep 0.05; done
kill "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true
start_runs debian-alone 2403 "$tmp/debian-run/sshd.pid" "$DEBIAN_SSHD" -D -e -f "$tmp/debian-run/sshd_config"

# --- servers for 2 and 3
serve() {  # PORT [--sshd PATH]: k8s-agent-sshd in the background; waits until it accepts
  local port="$1"
  shift
  in_ns env -i PATH=/usr/bin:/bin TMPDIR="$tmp/t" "$ENTRY" --port "$port" --keys "$tmp/keys" \
    --run-dir "$tmp/run-$port" "$@" >"$tmp/serve-$port.log" 2>&1 &
  pids+=($!)
  local i
  for ((i = 0; i < 200; i++)); do
    in_ns bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "bench/sshd.sh: the server on $port never accepted" >&2
  cat "$tmp/serve-$port.log" >&2
  exit 1
}
serve 2411
serve 2412 --sshd "$DEBIAN_SSHD"

echo "2/3 launch (hyperfine)" >&2
KEX=curve25519-sha256
in_ns hyperfine -N --warmup 3 --runs "$((RUNS * 2))" --export-json "$tmp/launch.json" \
  -n "portable kex=$KEX" "$(ssh_cmd 2411 -o KexAlgorithms=$KEX) true" \
  -n "debian kex=$KEX" "$(ssh_cmd 2412 -o KexAlgorithms=$KEX) true" \
  -n "portable default kex" "$(ssh_cmd 2411) true" \
  -n "debian default kex" "$(ssh_cmd 2412) true" >"$tmp/hyperfine.txt" 2>&1

echo "3/3 idle memory, 8 sessions each" >&2
for port in 2411 2412; do
  for i in 1 2 3 4 5 6 7 8; do
    # shellcheck disable=SC2046 # the client's words
    in_ns $(ssh_cmd "$port") "exec sleep 300" >/dev/null 2>&1 &
    pids+=($!)
  done
done
# Per server: the listener's descendants except the commands, once all 8 commands run.
server_pss() {  # PORT -> "KB PROCESSES"
  "$PY" - "$(cat "$tmp/run-$1/sshd.pid")" <<'PYEOF'
import os, sys, time
root = int(sys.argv[1])
def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []
def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:  # Ended meanwhile (a session still starting up).
        return ""
deadline = time.monotonic() + 30
while True:
    todo, procs = children(root), []
    while todo:
        p = todo.pop()
        procs.append(p)
        todo += children(p)
    sleeps = [p for p in procs if comm(p) == "sleep"]
    if len(sleeps) == 8 or time.monotonic() > deadline:
        break
    time.sleep(0.05)
if len(sleeps) != 8:
    sys.exit("only %d of 8 sessions started" % len(sleeps))
total = 0
servers = [p for p in procs if p not in sleeps and comm(p) not in ("sh", "bash")]
servers = [p for p in servers if comm(p)]
for p in servers:
    with open("/proc/%d/smaps_rollup" % p) as f:
        for line in f:
            if line.startswith("Pss:"):
                total += int(line.split()[1])
print(total, len(servers))
PYEOF
}
read -r pss_portable n_portable < <(server_pss 2411)
read -r pss_debian n_debian < <(server_pss 2412)

# --- report
"$PY" - "$tmp" "$RUNS" "$pss_portable" "$n_portable" "$pss_debian" "$n_debian" "$OUT" \
  "$("$PORTABLE/sshd" -V 2>&1 | head -1)" "$("$DEBIAN_SSHD" -V 2>&1 | head -1)" <<'PYEOF'
import json, statistics, sys, time, platform, os
tmp, runs, pp, np_, pd, nd, out, vp, vd = sys.argv[1:10]
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]
rows = []
start = {}
for label in ("portable", "entry-debian", "debian-alone"):
    xs = [float(l) for l in open(os.path.join(tmp, "start-%s.txt" % label))]
    start[label] = xs
launch = {r["command"]: r for r in json.load(open(os.path.join(tmp, "launch.json")))["results"]}
def ms(name):
    return launch[name]["median"] * 1000.0
lines = [
    "# k8s-agent-sshd and the portable sshd vs Debian's sshd",
    "",
    "bench/sshd.sh, %s, %s, %d CPUs, load %.1f; portable: %s; Debian: %s." % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), platform.machine(), os.cpu_count(),
        os.getloadavg()[0], vp, vd),
    "",
    "| | portable (k8s-agent-sshd) | Debian's sshd | ratio |",
    "|---|---|---|---|",
    "| start -> accepting, median / p95 (%s starts) | %.1f / %.1f ms | %.1f / %.1f ms (via k8s-agent-sshd) | %.2fx |" % (
        runs, statistics.median(start["portable"]), pct(start["portable"], 0.95),
        statistics.median(start["entry-debian"]), pct(start["entry-debian"], 0.95),
        statistics.median(start["portable"]) / statistics.median(start["entry-debian"])),
    "| start -> accepting, Debian's sshd alone on the same config | | %.1f / %.1f ms | |" % (
        statistics.median(start["debian-alone"]), pct(start["debian-alone"], 0.95)),
]
for kex in ("kex=curve25519-sha256", "default kex"):
    a, b = ms("portable " + kex), ms("debian " + kex)
    lines.append("| `ssh ... true`, median, %s | %.1f ms | %.1f ms | %.2fx |" % (kex, a, b, a / b))
a, b = int(pp) / 8.0, int(pd) / 8.0
lines.append("| idle memory (PSS) per attached session, 8 sessions | %.0f KB (%s processes) | %.0f KB (%s processes) | %.2fx |" % (
    a, np_, b, nd, a / b))
lines += ["", "The same client (OpenSSH 9.2's ssh) and the same job keys for both; the config is the one",
          "k8s-agent-sshd writes (Debian's 9.2 gets it without the 10.x keywords)."]
text = "\n".join(lines) + "\n"
print(text)
with open(out, "w") as f:
    f.write(text)
PYEOF
