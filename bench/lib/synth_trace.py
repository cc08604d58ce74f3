#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Writes synthetic k8s-agent --trace files for N hosts, as a tree-spawned launch would leave them.
"""usage: synth_trace.py --hosts N --out DIR [--fanout 64] [--seed S] [--failed K]

Writes DIR/launcher.jsonl (the hosts mpirun launches itself: the first FANOUT) and DIR/w-I.jsonl for each
worker that launched further hosts under tree spawn (its children begin after it started). Each host gets the
records an agent writes: begin, pod_status (Pending with waiting reasons, then Running with the pod's own
timestamps, whole seconds as on a real API server), pod_running, ssh_ready (with the attempt start), started,
exited; K hosts fail with ErrImagePull instead. Phases are drawn from fixed distributions (seeded): a few
hosts wait for a node (scale-up), image pulls vary, sshd starts 50-800 ms after the container.
Prints the file names, one per line.
"""
import argparse
import datetime
import json
import os
import random

BASE_US = 1796083200 * 1000000  # 2026-12-01T00:00:00Z
MONO_OFFSET = -1796000000 * 1000000  # Another origin: only differences matter.


def rfc3339(us):
    return datetime.datetime.fromtimestamp(us // 1000000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def line(host, pid, event, t, **extra):
    rec = {"host": host, "pod": host, "event": event, "t_wall_us": t, "t_mono_us": t + MONO_OFFSET, "pid": pid}
    rec.update(extra)
    return json.dumps(rec, separators=(",", ":")) + "\n"


def host_lines(rnd, index, begin, failed, on):
    host, pid = f"w-{index}", 10000 + index
    created = BASE_US + rnd.randint(0, 2) * 1000000
    scale_up = rnd.random() < 0.02  # Waits for the autoscaler to add a node.
    sched = created + (rnd.choice([0, 0, 0, 1, 1, 2]) + (35 if scale_up else 0)) * 1000000
    pull = int(rnd.lognormvariate(2.0, 0.6) * 1000000)
    started = sched + pull
    uid = f"uid-{index}"
    node = f"node-{index // 8}"
    out = [line(host, pid, "begin", begin, on=on)]
    seen = max(begin, created) + 15000
    if failed or seen < started:  # An agent that begins after the container is up never sees it Pending.
        extra = {"unschedulable": "Unschedulable"} if scale_up and not failed else {}
        out.append(line(host, pid, "pod_status", seen, uid=uid, phase="Pending", created=rfc3339(created),
                        restarts=0, waiting=["ContainerCreating"] if not failed else ["ErrImagePull"], **extra))
    if failed:
        out.append(line(host, pid, "failed", max(seen, sched + 4000000),
                        detail=f"pod default/{host} is Pending: container main is waiting: ErrImagePull "
                               "(check the image name and pull secrets)"))
        return out, None
    running_seen = max(begin, started - started % 1000000 + 1000000) + rnd.randint(2000, 40000)
    out.append(line(host, pid, "pod_status", running_seen, uid=uid, phase="Running", node=node,
                    created=rfc3339(created), true_since={"PodScheduled": rfc3339(sched), "Initialized": rfc3339(sched)},
                    container_started=rfc3339(started), restarts=1 if rnd.random() < 0.01 else 0))
    out.append(line(host, pid, "pod_running", running_seen + 50, detail="10.233.0.1"))
    attempt = max(running_seen, started + rnd.randint(50000, 800000))
    ready = attempt + rnd.randint(15000, 60000)
    out.append(line(host, pid, "ssh_ready", ready, attempt_t_mono_us=attempt + MONO_OFFSET,
                    detail="10.233.0.1:22 after 3 attempt(s)"))
    cmd = ready + rnd.randint(1000, 5000)
    out.append(line(host, pid, "started", cmd, detail="10.233.0.1"))
    out.append(line(host, pid, "exited", cmd + 60000000, detail="status 0"))
    return out, cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--fanout", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--failed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    failed = set(rnd.sample(range(1, a.hosts), min(a.failed, max(0, a.hosts - 1))))
    files = {}
    started = {}
    mpirun_begin = BASE_US + 500000
    for i in range(a.hosts):
        if i < a.fanout:
            parent, begin = None, mpirun_begin + i * 2000
        else:
            # Tree spawn: host i is launched by the orted on a first-level host.
            parent = (i - a.fanout) % a.fanout
            while parent in failed or started.get(parent) is None:
                parent = (parent + 1) % a.fanout
            begin = started[parent] + 300000 + rnd.randint(0, 20000)
        lines, cmd = host_lines(rnd, i, begin, i in failed, "launcher" if parent is None else f"w-{parent}")
        started[i] = cmd
        name = "launcher.jsonl" if parent is None else f"w-{parent}.jsonl"
        files.setdefault(name, []).extend(lines)
    for name, lines in sorted(files.items()):
        with open(os.path.join(a.out, name), "w", encoding="utf-8") as f:
            f.writelines(lines)
        print(os.path.join(a.out, name))


if __name__ == "__main__":
    main()
