#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Loads --report's Chrome trace-event JSON and checks every host has its own track with its spans in order.
"""usage: chrome_trace_test.py AGENT_BINARY

Builds synthetic tree-spawn traces (bench/lib/synth_trace.py: 200 hosts, 3 failing), runs
`AGENT --report --format json --chrome FILE`, and checks the Chrome JSON against the JSON report: one named
thread per host in start order, complete ("X") events whose phases follow the launch order
(scheduling, container, launcher, sshd, handshake, command), back to back and never overlapping, matching the
report's phase durations, and a "failed" instant for each failed host.
"""
import json
import os
import subprocess
import sys
import tempfile

ORDER = ["scheduling", "container", "launcher", "sshd", "handshake", "command"]
HERE = os.path.dirname(os.path.abspath(__file__))
SYNTH = os.path.join(HERE, "..", "..", "..", "bench", "lib", "synth_trace.py")


def fail(msg):
    print(f"FAIL [chrome-json]: {msg}", file=sys.stderr)
    sys.exit(1)


def main(agent):
    with tempfile.TemporaryDirectory(prefix="k8s-agent-chrome.") as tmp:
        files = subprocess.run([sys.executable, SYNTH, "--hosts", "200", "--fanout", "32", "--failed", "3",
                                "--out", os.path.join(tmp, "traces")], check=True, capture_output=True,
                               text=True).stdout.split()
        chrome = os.path.join(tmp, "launch.json")
        out = subprocess.run([agent, "-q", "--report", "--format", "json", "--chrome", chrome] + files,
                             capture_output=True, text=True)
        if out.returncode != 0:
            fail(f"--report exited {out.returncode}: {out.stderr}")
        report = json.loads(out.stdout)
        with open(chrome, encoding="utf-8") as f:
            trace = json.load(f)
    events = trace.get("traceEvents")
    if not isinstance(events, list) or not events:
        fail("no traceEvents")
    names, spans, failed = {}, {}, set()
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        elif e.get("ph") == "X":
            if not isinstance(e.get("ts"), int) or not isinstance(e.get("dur"), int) or e["dur"] < 0:
                fail(f"bad X event {e}")
            spans.setdefault(e["tid"], []).append(e)
        elif e.get("ph") == "i" and e.get("name") == "failed":
            failed.add(e["tid"])
    by_host = {name: tid for tid, name in names.items()}
    expected = [h["host"] for h in report["hosts"]]
    if sorted(by_host) != sorted(expected):
        fail(f"tracks {len(by_host)} != hosts {len(expected)}")
    if [names[t] for t in sorted(names)] != expected:
        fail("tracks are not in the report's start order")
    for h in report["hosts"]:
        tid = by_host[h["host"]]
        mine = spans.get(tid, [])
        if not mine:
            fail(f"{h['host']}: no spans")
        phases = [e["name"] for e in mine]
        if [p for p in ORDER if p in phases] != phases:
            fail(f"{h['host']}: phases out of order: {phases}")
        for a, b in zip(mine, mine[1:]):
            if b["ts"] < a["ts"] + a["dur"]:
                fail(f"{h['host']}: {b['name']} starts before {a['name']} ends")
        for e in mine:
            want = h["phases_ms"].get(e["name"])
            if want is None or abs(e["dur"] / 1000.0 - want) > 0.002:
                fail(f"{h['host']}: {e['name']} lasts {e['dur']} us, report says {want} ms")
        if ("failure" in h) != (tid in failed):
            fail(f"{h['host']}: failed instant does not match the report")
    print(f"ok [chrome-json]: {len(by_host)} tracks, {sum(len(v) for v in spans.values())} spans, "
          f"{len(failed)} failed hosts")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
