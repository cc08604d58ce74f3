#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The launch model of bench/tree_model.sh: parameters, the check on the bed, the projection.

usage: tree_model.py RUNS_TXT NCPU LOADAVG COMMIT > report.md

RUNS_TXT rows: name client n mode wall_ms machine_cpu_ms children_user children_sys (the last two as
bash's `times` prints them, 0m1.234s).
"""
import math
import re
import statistics
import sys
from datetime import datetime, timezone

RADIX = 64  # Open MPI 4's routed radix and PRRTE 3.0's rml_base_radix, by default.
CLIENTS = (("agent", "k8s-agent"), ("shared", "k8s-agent --lookup-cache 5s"), ("ssh", "ssh, same kex"))
HEAD = "| %s | %s | %s | agent / ssh | with the cache / ssh |" % tuple(c[1] for c in CLIENTS)


def seconds(text):
    m = re.fullmatch(r"(\d+)m([\d.]+)s", text)
    if not m:
        raise ValueError("not a `times` value: %r" % text)
    return int(m.group(1)) * 60 + float(m.group(2))


def load(path):
    runs = {}
    for line in open(path):
        f = line.split()
        if len(f) != 8:
            continue
        key = (f[0], f[1], int(f[2]), f[3])
        cpu = 1000 * (seconds(f[6]) + seconds(f[7]))
        runs.setdefault(key, []).append((int(f[4]), int(f[5]), cpu))
    return {k: tuple(statistics.median(r[i] for r in v) for i in range(3)) for k, v in runs.items()}


def ratio(a, b):
    return "%.2fx" % (a / b) if b > 0 else "—"


def levels(n, radix):
    """Daemons each parent starts at each level of the radix tree over n hosts (mpirun is the root).

    Open MPI 4's and PRRTE's radix tree gives level l's daemons radix children each, strided, so the hosts
    of a level spread evenly over its parents.
    """
    out, parents, placed = [], 1, 0
    while placed < n:
        here = min(n - placed, parents * radix)
        out.append(math.ceil(here / parents))
        placed += here
        parents = here
    return out


def main():
    runs = load(sys.argv[1])
    ncpu, loadavg, commit = int(sys.argv[2]), sys.argv[3], sys.argv[4]
    ns = sorted({k[2] for k in runs if k[0] == "curve"})
    p = {}
    for c, _ in CLIENTS:
        one, chain = runs[("one", c, 1, "tree")], runs[("chain", c, 2, "tree")]
        per_host = lambda n, mode, i: (runs[("curve", c, n, mode)][i] - one[i]) / (n - 1)
        p[c] = {
            "one": one[0],
            "L": chain[0] - one[0],
            # Without tree spawn mpirun starts every daemon itself: all of that CPU is the launcher's.
            "c": {n: per_host(n, "notree", 2) for n in ns},
            "C": {(n, m): per_host(n, m, 1) for n in ns for m in ("tree", "notree")},
        }
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = ["# The launch model, measured on the bed and projected to real nodes", "",
           "%s, commit %s, load %s at the end (the bed's own %d pods), %d cores; `bench/tree_model.sh`: "
           "Open MPI 4 `mpirun -np N true`, one rank per pod, medians of the runs; ssh with the agent's key "
           "exchange (curve25519-sha256)." % (now, commit, loadavg, ns[-1], ncpu), "",
           "## Parameters", "",
           "| parameter | how " + HEAD, "|---|---|---:|---:|---:|---:|---:|"]
    rows = [("T_one", "`mpirun -H w-0 -np 1 true`", lambda c: p[c]["one"], "%.0f ms"),
            ("L, one more level", "`-H w-0,w-1 -np 2 --mca routed_radix 1` (w-0 starts w-1) minus T_one",
             lambda c: p[c]["L"], "%.0f ms")]
    for n in ns:
        rows.append(("c at N = %d, launcher CPU per direct launch" % n,
                     "mpirun and its clients' CPU (`times`), no_tree_spawn, minus T_one's, per extra host",
                     lambda c, n=n: p[c]["c"][n], "%.1f ms"))
    for n in ns:
        for m, name in (("tree", "tree"), ("notree", "no_tree_spawn")):
            rows.append(("C at N = %d, %s, machine CPU per host" % (n, name),
                         "all CPUs' busy time (/proc/stat) minus T_one's, per extra host",
                         lambda c, n=n, m=m: p[c]["C"][(n, m)], "%.1f ms"))
    for name, how, get, fmt in rows:
        v = [get(c) for c, _ in CLIENTS]
        out.append("| %s | %s | %s | %s |" % (name, how, " | ".join(fmt % x for x in v),
                                             " | ".join(ratio(x, v[-1]) for x in v[:-1])))
    out += ["", "## Check on the bed", "",
            "Every pod of the bed shares the machine's %d cores, so on the bed the model is "
            "T(N) = T_one + (N - 1) x C(N) / %d: the work per extra host, measured at that N, spread over "
            "the cores. Against the measured wall times:" % (ncpu, ncpu), "",
            "| client | spawn | N | measured | model | miss |", "|---|---|---:|---:|---:|---:|"]
    worst = {}
    for c, cname in CLIENTS:
        for n in ns:
            for mode in ("tree", "notree"):
                wall = runs[("curve", c, n, mode)][0]
                model = p[c]["one"] + (n - 1) * p[c]["C"][(n, mode)] / ncpu
                miss = (model - wall) / wall
                worst[c] = max(worst.get(c, 0), abs(miss))
                out.append("| %s | %s | %d | %.2f s | %.2f s | %+.0f %% |" % (
                    cname, "tree" if mode == "tree" else "no_tree_spawn", n, wall / 1000, model / 1000,
                    100 * miss))
    out += ["", "Largest miss: %s." % ", ".join("%s %.0f %%" % (n, 100 * worst[c]) for c, n in CLIENTS)]
    small = ns[0]
    out += ["", "## Projection to real nodes", "",
            "On real nodes each daemon starts on its own node, in parallel. What stays serial is a parent's "
            "launches of its children (c each: they start one after another) and the tree's depth (L per "
            "level beyond the first). Open MPI 4's and PRRTE 3.0's radix tree (radix %d, mpirun the root) "
            "spreads each level's hosts evenly over its parents; with k_l the children per parent at level "
            "l and d the depth:" % RADIX, "",
            "T(N) = T_one + (d - 1) x L + sum over levels of (k_l - 1) x c", "",
            "without tree spawn d = 1 and k = N. c is the one measured at N = %d, the least crowded bed; "
            "at a parent that is a node running only the launch, a client's CPU is what it costs alone." % small,
            "", "| hosts | spawn | children per parent, by level " + HEAD, "|---:|---|---|---:|---:|---:|---:|---:|"]
    for n in (256, 1000, 4000):
        for mode, ks in (("tree", levels(n, RADIX)), ("no_tree_spawn", [n])):
            t = {c: p[c]["one"] + (len(ks) - 1) * p[c]["L"] + sum(k - 1 for k in ks) * p[c]["c"][small]
                 for c, _ in CLIENTS}
            v = [t[c] for c, _ in CLIENTS]
            out.append("| %d | %s | %s | %s | %s |" % (
                n, mode, " + ".join(map(str, ks)), " | ".join("%.1f s" % (x / 1000) for x in v),
                " | ".join(ratio(x, v[-1]) for x in v[:-1])))
    out += ["", "What the projection leaves out: the network between nodes (the bed's is a bridge on one "
            "machine), an API server's latency under 1,000 lookups (the agent makes one GET per host; "
            "`--lookup-cache` makes it one list per node and burst), and the ranks' own start beyond "
            "T_one's one rank."]
    print("\n".join(out))


if __name__ == "__main__":
    main()
