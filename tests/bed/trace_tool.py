#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Reads k8s-agent --trace files (JSON lines) for e2e assertions (the launch report itself is `k8s-agent --report`).
"""k8s-agent trace reader.

A trace line: {"host":"w-1","pod":"w-1","event":"resolved"|"pod_running"|"ssh_ready"|"started"|"exited"|
"failed","t_mono_us":N,"t_wall_us":N,"pid":N,"detail":"..."}. "host" is the name the agent was given, "pod"
the pod it resolved to; a HOST argument below matches either. Agents also write "begin" and "pod_status" lines
(the pod's own timestamps, read by `k8s-agent --report`); the commands here ignore them unless named.

Commands (exit 0 = assertion holds, 1 = it does not, with the reason on stderr):
  order FILE HOST EVENT...              EVENTs occur for HOST, first occurrences in this order
  after FILE HOST EVENT T0_WALL_US MS   EVENT for HOST happens at least MS ms after T0 (wall clock, us)
  gap FILE HOST EV_A EV_B MIN_MS        first EV_B is at least MIN_MS after first EV_A
  hosts FILE EVENT                      prints the sorted distinct hosts that have EVENT
  grep FILE HOST EVENT TEXT             some EVENT line for HOST has TEXT in its detail (or anywhere)
  dump FILE                             prints the lines, one per row, readable
"""
import json
import sys


def load(path):
    events = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    print(f"trace: {path}:{n}: not JSON: {line[:120]}", file=sys.stderr)
                    continue
                if isinstance(obj, dict):
                    events.append(obj)
    except FileNotFoundError:
        print(f"trace: {path}: no such file (was --trace / K8S_AGENT_TRACE honoured?)", file=sys.stderr)
    return events


def wall_us(ev):
    value = ev.get("t_wall_us")
    return value if isinstance(value, (int, float)) else 0


def for_host(events, host):
    return [e for e in events if host in (e.get("host"), e.get("pod"))]


def first(events, host, name):
    for ev in for_host(events, host):
        if ev.get("event") == name:
            return ev
    return None


def describe(events, host):
    rows = [f"  {e.get('event')} t_wall_us={e.get('t_wall_us')} pid={e.get('pid')} {e.get('detail', '')}"
            for e in for_host(events, host)]
    return "\n".join(rows) if rows else "  (no trace lines for this host)"


def fail(msg, events=None, host=None):
    print(f"trace assertion failed: {msg}", file=sys.stderr)
    if events is not None and host is not None:
        print(f"trace lines for {host}:\n{describe(events, host)}", file=sys.stderr)
    return 1


def cmd_order(path, host, *names):
    events = load(path)
    last = -1
    for name in names:
        ev = first(events, host, name)
        if ev is None:
            return fail(f"{host}: no '{name}' event", events, host)
        if wall_us(ev) < last:
            return fail(f"{host}: '{name}' is earlier than the event before it", events, host)
        last = wall_us(ev)
    return 0


def cmd_after(path, host, name, t0_us, min_ms):
    events = load(path)
    ev = first(events, host, name)
    if ev is None:
        return fail(f"{host}: no '{name}' event", events, host)
    delta_ms = (wall_us(ev) - int(t0_us)) / 1000.0
    if delta_ms < float(min_ms):
        return fail(f"{host}: '{name}' at +{delta_ms:.0f} ms, expected >= {min_ms} ms", events, host)
    return 0


def cmd_gap(path, host, name_a, name_b, min_ms):
    events = load(path)
    a, b = first(events, host, name_a), first(events, host, name_b)
    if a is None or b is None:
        return fail(f"{host}: missing '{name_a}' or '{name_b}'", events, host)
    gap_ms = (wall_us(b) - wall_us(a)) / 1000.0
    if gap_ms < float(min_ms):
        return fail(f"{host}: {name_a} -> {name_b} took {gap_ms:.0f} ms, expected >= {min_ms} ms", events, host)
    return 0


def cmd_hosts(path, name):
    hosts = sorted({str(e.get("pod") or e.get("host")) for e in load(path) if e.get("event") == name})
    print(" ".join(hosts))
    return 0


def cmd_grep(path, host, name, text):
    events = load(path)
    for ev in for_host(events, host):
        if ev.get("event") == name and text in json.dumps(ev):
            return 0
    return fail(f"{host}: no '{name}' line containing '{text}'", events, host)


def cmd_dump(path):
    for ev in load(path):
        print(json.dumps(ev, sort_keys=True))
    return 0


COMMANDS = {"order": cmd_order, "after": cmd_after, "gap": cmd_gap, "hosts": cmd_hosts, "grep": cmd_grep,
            "dump": cmd_dump}


def main(argv):
    if len(argv) < 3 or argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[1]](*argv[2:])
    except TypeError as err:
        print(f"trace_tool: bad arguments for {argv[1]}: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
