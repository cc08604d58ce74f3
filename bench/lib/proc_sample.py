#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Snapshots the CPU, scheduling and memory counters of processes from /proc, as JSON.
"""usage: proc_sample.py LABEL=PID...

Prints one JSON object {LABEL: {...}} with, per process:
  cpu_ms            utime + stime (/proc/PID/stat fields 14, 15), in ms
  voluntary_cs      voluntary context switches (/proc/PID/status): sleeps
                    that ended, i.e. wake-ups
  nonvoluntary_cs   preemptions
  sched_run_ns, sched_wait_ns, sched_slices   /proc/PID/schedstat
  rss_kb, pss_kb, private_kb (Private_Clean + Private_Dirty), anon_kb
                    /proc/PID/smaps_rollup
  wchar             bytes the process passed to write(2) and the like
                    (/proc/PID/io): an agent with --lookup-cache that
                    listed the namespace wrote its pods to the shared list
  t_mono_ns         when the sample was taken
A process that is gone gives {"gone": true}.
"""
import json
import os
import sys
import time

TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")


def sample(pid):
    out = {"t_mono_ns": time.monotonic_ns()}
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    # comm may hold spaces: fields start after the last ')'.
    fields = stat[stat.rindex(")") + 2:].split()
    out["cpu_ms"] = (int(fields[11]) + int(fields[12])) * TICK_MS
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key == "voluntary_ctxt_switches":
                out["voluntary_cs"] = int(value)
            elif key == "nonvoluntary_ctxt_switches":
                out["nonvoluntary_cs"] = int(value)
    with open(f"/proc/{pid}/schedstat") as f:
        run, wait, slices = (int(x) for x in f.read().split()[:3])
    out.update(sched_run_ns=run, sched_wait_ns=wait, sched_slices=slices)
    mem = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                mem[parts[0][:-1]] = int(parts[1])
    out["rss_kb"] = mem.get("Rss", 0)
    out["pss_kb"] = mem.get("Pss", 0)
    out["private_kb"] = mem.get("Private_Clean", 0) + mem.get("Private_Dirty", 0)
    out["anon_kb"] = mem.get("Anonymous", 0)
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key == "wchar":
                out["wchar"] = int(value)
    return out


def main():
    result = {}
    for arg in sys.argv[1:]:
        label, _, pid = arg.partition("=")
        try:
            result[label] = sample(int(pid))
        except (OSError, ValueError):
            result[label] = {"gone": True}
    json.dump(result, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
