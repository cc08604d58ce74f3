#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Turns bench/run.sh's raw measurements into the results table (markdown), a CSV summary and the plot.
"""usage: report.py RAW_DIR OUT_DIR

Reads RAW_DIR (meta.json, hyperfine JSON, b2_readiness.csv, b3_*, b4_*) and
writes OUT_DIR/latest.md, RAW_DIR/summary.csv, RAW_DIR/launch_vs_n.dat and
OUT_DIR/launch_vs_n.png (gnuplot), then prints latest.md. Missing inputs
(a benchmark not run or failed) are reported as such, not as errors.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def pct(values, p):
    """Percentile with linear interpolation between closest ranks."""
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def stats(values):
    return {
        "n": len(values),
        "median": pct(values, 50),
        "p5": pct(values, 5),
        "p95": pct(values, 95),
        "min": min(values) if values else float("nan"),
        "max": max(values) if values else float("nan"),
    }


def fmt_ms(s, unit="ms", digits=0):
    if s is None or s["n"] == 0:
        return "—"
    f = "%%.%df" % digits
    return (f + " %s <sub>p5 " + f + " · p95 " + f + "</sub>") % (
        s["median"], unit, s["p5"], s["p95"])


def hyperfine_pair(raw, name):
    """(agent times ms, ssh times ms) from a two-command hyperfine export."""
    data = load_json(os.path.join(raw, name + ".json"))
    if not data or len(data.get("results", [])) < 2:
        return None, None
    a, s = data["results"][:2]
    return [t * 1000 for t in a["times"]], [t * 1000 for t in s["times"]]


def hyperfine_single(raw, name):
    """Times in ms of a one-command hyperfine export, or None."""
    data = load_json(os.path.join(raw, name + ".json"))
    if not data or not data.get("results"):
        return None
    return [t * 1000 for t in data["results"][0]["times"]]


class Report:
    def __init__(self, raw, out):
        self.raw = raw
        self.out = out
        os.makedirs(out, exist_ok=True)  # --out may name a new directory.
        self.meta = load_json(os.path.join(raw, "meta.json")) or {}
        self.rows = []      # main table
        self.details = []   # markdown sections
        self.csv = []

    def row(self, num, what, agent, ssh, ratio, target, ok):
        verdict = "—" if ok is None else ("**met**" if ok else "**missed**")
        self.rows.append((num, what, agent, ssh, ratio, target, verdict))
        self.csv.append((num, what, agent, ssh, ratio, target,
                         "" if ok is None else ("met" if ok else "missed")))

    # 1 ----------------------------------------------------------------------
    def b1(self):
        data = load_json(os.path.join(self.raw, "b1_launch.json"))
        res = (data or {}).get("results", [])
        if len(res) < 2:
            return self.row(1, "launch on a ready pod", "not run", "", "", "≤ 0.6×", None)
        walls = [stats([t * 1000 for t in r["times"]]) for r in res]
        # hyperfine's user/system: the process's own CPU time (the agent's API GET included).
        cpus = [(r["user"] + r["system"]) * 1000 for r in res]
        sa = walls[0]
        names = ["ssh (default kex)", "ssh -o KexAlgorithms=curve25519-sha256"]
        for i in range(1, len(res)):
            r = sa["median"] / walls[i]["median"]
            self.row(1, "launch on a ready pod (`w-0 true`), wall, vs %s" % names[i - 1], fmt_ms(sa),
                     fmt_ms(walls[i]), "%.2f×" % r, "≤ 0.6×", r <= 0.6)
            rc = cpus[0] / cpus[i]
            self.row(1, "launch on a ready pod, client CPU (user+sys, mean), vs %s" % names[i - 1],
                     "%.1f ms" % cpus[0], "%.1f ms" % cpus[i], "%.2f×" % rc, "≤ 1.0×", rc <= 1.0)

    # 2 ----------------------------------------------------------------------
    def b2(self):
        path = os.path.join(self.raw, "b2_readiness.csv")
        if not os.path.exists(path):
            return self.row(2, "readiness detection", "not run", "", "", "p95 ≤ 100 ms", None)
        ready, started, remote_a, remote_s, res = [], [], [], [], []
        with open(path) as f:
            for r in csv.DictReader(f):
                t = int(r["t_listen_us"])
                res.append(int(r["listen_res_us"]) / 1000)
                if r["agent_ssh_ready_us"]:
                    ready.append((int(r["agent_ssh_ready_us"]) - t) / 1000)
                if r["agent_started_us"]:
                    started.append((int(r["agent_started_us"]) - t) / 1000)
                remote_a.append((int(r["agent_remote_us"]) - t) / 1000)
                remote_s.append((int(r["ssh_remote_us"]) - t) / 1000)
        if not remote_a:
            return self.row(2, "readiness detection", "no complete run", "", "", "p95 ≤ 100 ms", None)
        st, ra, rs = stats(started), stats(remote_a), stats(remote_s)
        self.row(2, "readiness: sshd listens → command starts (trace `started`; ssh: remote `date`)",
                 fmt_ms(st), fmt_ms(rs), "%.2f× (p50)" % (st["median"] / rs["median"]),
                 "p95 ≤ 100 ms", st["p95"] <= 100)
        self.row("2b", "readiness: sshd listens → remote command runs (remote `date`, both)",
                 fmt_ms(ra), fmt_ms(rs), "%.2f× (p50)" % (ra["median"] / rs["median"]),
                 "", None)
        sr = stats(ready)
        lines = [
            "### 2. Readiness detection (%d runs)" % len(remote_a), "",
            "Pod `w-1` is Running in the API while its sshd is stopped; `k8s-agent w-1 'date +%%s%%N'` and "
            "`ssh -o ConnectionAttempts=10 IP 'date +%%s%%N'` start together, sshd starts 300–800 ms later "
            "(random). T = first sight of sshd's LISTEN socket in `/proc/net/tcp` of the pod's netns, polled "
            "every 1 ms (poll gap p95 %.1f ms: T is late by at most that). Times from T:" % pct(res, 95), "",
            "| from T to | p50 | p95 | min | max |", "|---|---|---|---|---|",
        ]
        for name, s in (("agent `ssh_ready` (probe handshake done)", sr),
                        ("agent `started` (exec request accepted)", st),
                        ("agent remote `date` ran", ra), ("ssh remote `date` ran", rs)):
            lines.append("| %s | %.0f ms | %.0f ms | %.0f ms | %.0f ms |" % (
                name, s["median"], s["p95"], s["min"], s["max"]))
        self.details.append("\n".join(lines))

    # 3 ----------------------------------------------------------------------
    def b3_one(self, tag):
        stats_json = load_json(os.path.join(self.raw, "b3_%s.stats.json" % tag))
        run = load_json(os.path.join(self.raw, "b3_%s.run.json" % tag))
        if not stats_json or not run:
            return None
        hosts = run["hosts"]
        per_host = Counter()
        kinds = Counter()
        other = 0
        try:
            with open(os.path.join(self.raw, "b3_%s.access.log" % tag)) as f:
                for line in f:
                    m = re.search(r'"(\w+) (\S+) HTTP', line)
                    if not m:
                        continue
                    target = m.group(2)
                    h = re.search(r"/pods/([^/?]+)", target) or re.search(
                        r"metadata\.name(?:%3D|=)([^&]+)", target)
                    kind = "WATCH" if "watch=" in target else m.group(1)
                    kinds[kind] += 1
                    if h:
                        per_host[h.group(1)] += 1
                    else:
                        other += 1
        except OSError:
            pass
        counts = [per_host.get("w-%d" % i, 0) for i in range(hosts)]
        return {
            "hosts": hosts, "total": stats_json.get("total", 0), "requests": stats_json.get("requests", {}),
            "per_host_max": max(counts) if counts else 0, "per_host_min": min(counts) if counts else 0,
            "per_host_mean": sum(counts) / len(counts) if counts else 0, "other": other,
            "kinds": dict(kinds), "failures": run.get("failures"), "wall_ms": run.get("wall_ms"),
        }

    def b3(self):
        res = {t: self.b3_one(t) for t in ("ready", "waited")}
        lines = ["### 3. API requests per host", "",
                 "Separate `k8s-agent -q w-i true` processes started at once in the launcher pod, as mpirun "
                 "starts one agent per host. *waited*: all pods Pending (no IP) until every agent has opened "
                 "its watch, then made Running one by one (~20 ms apart). Counts from the fake API server "
                 "(`/_control/stats`; per host from its access log).", "",
                 "| case | hosts | requests | per host (mean / max) | by kind | agent failures | wall |",
                 "|---|---|---|---|---|---|---|"]
        for tag, target_max, label in (("ready", 1, "ready"), ("waited", 2, "waited on")):
            r = res[tag]
            if r is None:
                self.row(3, "API requests per %s host" % label, "not run", "", "", "", None)
                continue
            ok = r["per_host_max"] <= target_max and not r["failures"]
            self.row(3, "API requests per %s host (%d hosts)" % (label, r["hosts"]),
                     "%.2f mean, %d max" % (r["per_host_mean"], r["per_host_max"]), "0 (no API)", "",
                     "%s %d" % ("=" if target_max == 1 else "≤", target_max), ok)
            lines.append("| %s | %d | %d | %.2f / %d | %s | %s | %s ms |" % (
                label, r["hosts"], r["total"], r["per_host_mean"], r["per_host_max"],
                ", ".join("%s %d" % kv for kv in sorted(r["kinds"].items())),
                r["failures"], r["wall_ms"]))
        self.details.append("\n".join(lines))

    # 4 ----------------------------------------------------------------------
    def b4(self):
        alone = load_json(os.path.join(self.raw, "b4_idle_alone.json"))
        start = load_json(os.path.join(self.raw, "b4_idle_start.json"))
        end = load_json(os.path.join(self.raw, "b4_idle_end.json"))
        if not start or not end or not alone:
            return self.row(4, "idle cost", "not run", "", "", "", None)
        names = {"agent": "k8s-agent", "agent-shared": "k8s-agent --lookup-cache 5s", "ssh": "ssh"}

        def kind_index(label):  # "agent-shared3" -> ("agent-shared", 3)
            m = re.match(r"(.*?)(\d+)$", label)
            return (m.group(1), int(m.group(2))) if m else (label, 0)

        d = {kind: [] for kind in names}
        for label in sorted(start, key=kind_index):
            kind = kind_index(label)[0]
            if kind not in d:
                continue
            a, b = start[label], end.get(label, {"gone": True})
            if a.get("gone") or b.get("gone"):
                return self.row(4, "idle cost: client %s exited early" % label, "", "", "", "", None)
            d[kind].append({
                "secs": (b["t_mono_ns"] - a["t_mono_ns"]) / 1e9,
                "cpu_ms": b["cpu_ms"] - a["cpu_ms"],
                "run_ms": (b["sched_run_ns"] - a["sched_run_ns"]) / 1e6,
                "wakeups": b["voluntary_cs"] - a["voluntary_cs"],
                "preempt": b["nonvoluntary_cs"] - a["nonvoluntary_cs"],
                "slices": b["sched_slices"] - a["sched_slices"],
                "pss": b["pss_kb"], "private": b["private_kb"], "rss": b["rss_kb"], "anon": b["anon_kb"],
                "wchar": b.get("wchar"),
            })
        if not d["agent"] or not d["ssh"]:
            return self.row(4, "idle cost: incomplete data", "", "", "", "", None)
        # Older raw data has no agent-shared clients.
        kinds = [kind for kind in names if d[kind]]
        k = len(d["agent"])
        secs = d["agent"][0]["secs"]
        # The agent-shared that listed the namespace wrote its pods to the shared list: more than any plain
        # agent wrote (none of the others writes a file).
        plain_w = [x["wchar"] for x in d["agent"] if x["wchar"] is not None]
        for x in d["agent-shared"]:
            x["listed"] = bool(plain_w) and x["wchar"] is not None and x["wchar"] > max(plain_w)

        def mean(kind, key, xs=None):
            xs = d[kind] if xs is None else xs
            return sum(x[key] for x in xs) / len(xs)

        def mx(kind, key):
            return max(x[key] for x in d[kind])

        al = {kind: next((v for lab, v in alone.items() if kind_index(lab)[0] == kind), None) for kind in kinds}
        if any(v is None or v.get("gone") for v in al.values()):
            return self.row(4, "idle cost: client exited early", "", "", "", "", None)
        keepalives = 1 + int(secs // 30)  # ServerAliveInterval 30 s: send + reply wake-ups each
        for kind in kinds[:-1]:
            self.row(4, "idle %.0f s attached: CPU, wake-ups per client (mean of %d; max)%s" % (
                secs, k, "" if kind == "agent" else ", " + names[kind]),
                "%.2f ms, %.1f wake-ups (max %d)" % (mean(kind, "run_ms"), mean(kind, "slices"),
                                                    mx(kind, "slices")),
                "%.2f ms, %.1f wake-ups (max %d)" % (mean("ssh", "run_ms"), mean("ssh", "slices"),
                                                    mx("ssh", "slices")), "",
                "0 beyond keepalives", mx(kind, "slices") <= 2 * keepalives)

        def mem_row(what, pss, private, lone=False):  # against the lone ssh, or the mean of ssh's
            ssh = (al["ssh"]["pss_kb"], al["ssh"]["private_kb"]) if lone else (
                mean("ssh", "pss"), mean("ssh", "private"))
            r = pss / ssh[0]
            self.row(4, what, "%d kB (%d kB)" % (pss, private), "%d kB (%d kB)" % ssh, "%.2f×" % r,
                     "PSS ≤ ssh's", r <= 1.0)

        mem_row("idle memory, 1 client of each: PSS (private)", al["agent"]["pss_kb"], al["agent"]["private_kb"],
                lone=True)
        if "agent-shared" in al:
            mem_row("idle memory, 1 client of each, %s (it lists the namespace): PSS (private)" %
                    names["agent-shared"], al["agent-shared"]["pss_kb"], al["agent-shared"]["private_kb"], lone=True)
        mem_row("idle memory, %d clients of each: PSS per client (private)" % k, mean("agent", "pss"),
                mean("agent", "private"))
        if d["agent-shared"]:
            listers = [x for x in d["agent-shared"] if x["listed"]]
            others = [x for x in d["agent-shared"] if not x["listed"]]
            if listers and others:
                mem_row("idle memory, %d clients of each, %s: the one that listed, PSS (private)" % (
                    k, names["agent-shared"]), mean("agent-shared", "pss", listers),
                    mean("agent-shared", "private", listers))
                mem_row("idle memory, %d clients of each, %s: the %d answered from its list, PSS per "
                        "client (private)" % (k, names["agent-shared"], len(others)),
                        mean("agent-shared", "pss", others), mean("agent-shared", "private", others))
            else:
                mem_row("idle memory, %d clients of each, %s: PSS per client (private)" % (
                    k, names["agent-shared"]), mean("agent-shared", "pss"), mean("agent-shared", "private"))
        lines = ["### 4. Idle cost (%.0f s window, remote `sleep`, %d of each of %s attached)" % (
            secs, k, ", ".join(names[kind] for kind in kinds)), "",
            "Counters from `/proc/PID/{stat,status,schedstat,smaps_rollup}` at the start and end of the window; "
            "wake-ups = schedstat timeslices (every return to the CPU), memory at the end.", "",
            "| client | CPU (schedstat run) | utime+stime | voluntary cs | schedstat slices | preemptions "
            "| RSS | PSS | private | anon |",
            "|---|---|---|---|---|---|---|---|---|---|"]
        for kind in kinds:
            for i, x in enumerate(d[kind]):
                lines.append("| %s #%d%s | %.2f ms | %.0f ms | %d | %d | %d | %d kB | %d kB | %d kB | %d kB |" % (
                    names[kind], i + 1, " (listed)" if x.get("listed") else "", x["run_ms"], x["cpu_ms"],
                    x["wakeups"], x["slices"], x["preempt"], x["rss"], x["pss"], x["private"], x["anon"]))
        lines += ["", "Alone (one client of each attached): "
                  + "; ".join("%s RSS %d kB, PSS %d kB, private %d kB, anon %d kB" % (
                      names[kind], al[kind]["rss_kb"], al[kind]["pss_kb"],
                      al[kind]["private_kb"], al[kind]["anon_kb"]) for kind in kinds) + ".",
                  "", "k8s-agent's only timer is its SSH keepalive (ServerAliveInterval, default 30 s); "
                  "ssh has none by default. Private memory includes file pages only this client maps "
                  "(its own binary and libraries), which further clients of the same kind share."]
        if d["agent-shared"]:
            lines += ["", "With `--lookup-cache 5s` the first agent lists the namespace and stores its pods "
                      "(the shared list is removed before the alone sample), the others are answered from "
                      "that list without a connection to the API server; \"listed\" marks the one that "
                      "wrote the list (more bytes written than any plain agent)."]
        self.details.append("\n".join(lines))

    # 5 ----------------------------------------------------------------------
    def b5(self):
        a, s = hyperfine_pair(self.raw, "b5_bulk")
        info = load_json(os.path.join(self.raw, "b5_bytes.json")) or {}
        if a is None:
            return self.row(5, "bulk stdout throughput", "not run", "", "", "≥ 1.0×", None)
        n = info.get("bytes", 0)
        mib = n / (1 << 20)
        ta, ts = stats([mib / (t / 1000) for t in a]), stats([mib / (t / 1000) for t in s])
        r = ta["median"] / ts["median"]
        intact = info.get("agent_bytes") == n and info.get("ssh_bytes") == n
        self.row(5, "bulk stdout, %d MiB (MiB/s%s)" % (mib, "" if intact else "; BYTE COUNT WRONG"),
                 fmt_ms(ta, "MiB/s"), fmt_ms(ts, "MiB/s"), "%.2f×" % r, "≥ 1.0×", r >= 1.0 and intact)

    # 6 ----------------------------------------------------------------------
    def b6(self):
        a, s = hyperfine_pair(self.raw, "b6_mpi_hello")
        if a is None:
            return self.row(6, "mpirun MPI hello, 4 pods", "not run / failed", "", "", "≤ 0.8×", None)
        sa, ss = stats(a), stats(s)
        r = sa["median"] / ss["median"]
        self.row(6, "`mpirun` MPI hello across 4 pods", fmt_ms(sa), fmt_ms(ss), "%.2f×" % r, "≤ 0.8×",
                 r <= 0.8)

    # 7 ----------------------------------------------------------------------
    def b7(self):
        ns = sorted({int(m.group(1)) for f in os.listdir(self.raw)
                     for m in [re.match(r"b7_n(\d+)_(tree|notree)\.json$", f)] if m})
        if not ns:
            return self.row(7, "launch time vs N", "not run", "", "", "", None)
        series = {}
        modes = ("tree", "notree")
        names = {"tree": "tree", "notree": "no_tree_spawn"}
        for n in ns:
            for mode in modes:
                a, s = hyperfine_pair(self.raw, "b7_n%d_%s" % (n, mode))
                if a is not None:
                    series[(n, mode)] = (stats(a), stats(s))
        # The third command, ssh with the agent's key exchange (runs from before it was added lack it).
        kex = {}
        for n in ns:
            for mode in modes:
                data = load_json(os.path.join(self.raw, "b7_n%d_%s.json" % (n, mode)))
                if data and len(data.get("results", [])) >= 3:
                    kex[(n, mode)] = stats([t * 1000 for t in data["results"][2]["times"]])
        dat = os.path.join(self.raw, "launch_vs_n.dat")
        with open(dat, "w") as f:
            f.write("# N  agent_tree(med p5 p95)  ssh_tree(med p5 p95)  agent_notree(...)  ssh_notree(...)"
                    "  ssh_kex_tree(...)  ssh_kex_notree(...)\n")
            for n in ns:
                cols = [str(n)]
                for mode in ("tree", "notree"):
                    for k in (0, 1):
                        st = series.get((n, mode))
                        cols += (["%.1f" % st[k][x] for x in ("median", "p5", "p95")] if st else ["NaN"] * 3)
                for mode in ("tree", "notree"):
                    st = kex.get((n, mode))
                    cols += (["%.1f" % st[x] for x in ("median", "p5", "p95")] if st else ["NaN"] * 3)
                f.write(" ".join(cols) + "\n")
        lines = ["### 7. Launch time vs N pods (`mpirun -np N true`, one rank per pod)", "",
                 "| N | spawn | k8s-agent | ssh | ssh, same kex | ratio | ratio (same kex) |",
                 "|---|---|---|---|---|---|---|"]
        for n in ns:
            for mode in modes:
                st = series.get((n, mode))
                if st:
                    k = kex.get((n, mode))
                    lines.append("| %d | %s | %s | %s | %s | %.2f× | %s |" % (
                        n, names[mode], fmt_ms(st[0]), fmt_ms(st[1]), fmt_ms(k) if k else "—",
                        st[0]["median"] / st[1]["median"],
                        "%.2f×" % (st[0]["median"] / k["median"]) if k else "—"))
        lines += ["", "Per-host cost (least-squares slope of the median over N, N = %s), the linear "
                  "model T(N) = T0 + slope × N checked against the measured points (largest miss), and "
                  "its projection to 1,000 and 4,000 hosts:" % ", ".join(map(str, ns)), "",
                  "| spawn | client | slope | T0 | largest miss | 1,000 hosts | 4,000 hosts |",
                  "|---|---|---|---|---|---|---|"]
        for mode in modes:
            if not any((n, mode) in series for n in ns):
                continue
            fits = {}
            for who, get in (("k8s-agent", lambda n: series[(n, mode)][0]),
                             ("ssh", lambda n: series[(n, mode)][1]),
                             ("ssh, same kex", lambda n: kex[(n, mode)])):
                pts = [(n, get(n)["median"]) for n in ns
                       if (n, mode) in series and (who != "ssh, same kex" or (n, mode) in kex)]
                sl = slope(pts)
                if sl != sl:
                    continue
                t0 = sum(p[1] for p in pts) / len(pts) - sl * sum(p[0] for p in pts) / len(pts)
                miss = max(abs(t0 + sl * p[0] - p[1]) / p[1] for p in pts)
                fits[who] = sl
                lines.append("| %s | %s | %.1f ms/host | %.0f ms | %.0f %% | %.1f s | %.1f s |" % (
                    names[mode], who, sl, t0, 100 * miss, (t0 + 1000 * sl) / 1000, (t0 + 4000 * sl) / 1000))
            sa = fits.get("k8s-agent", float("nan"))
            for who in ("ssh", "ssh, same kex"):
                ss = fits.get(who, float("nan"))
                if sa == sa and ss == ss and ss:
                    self.row(7, "launch cost per extra pod (%s, vs %s, N=%s)" % (
                        names[mode], who, "..".join(map(str, (ns[0], ns[-1])))),
                        "%.1f ms/host" % sa, "%.1f ms/host" % ss, "%.2f×" % (sa / ss), "≤ 0.4×", sa / ss <= 0.4)
        lines += ["", "The model is the bed's: every pod on one machine, so a daemon's own start-up is "
                  "paid on the same 2 cores as the launches; on real nodes each prted runs on its own node, "
                  "and with tree spawn only the launcher's share (the radix) and the tree's depth "
                  "(log_radix N levels) stay serial."]
        png = self.plot(dat, ns)
        if png:
            lines += ["", "![launch time vs N](%s)" % os.path.basename(png)]
        self.details.append("\n".join(lines))

    # 9 ----------------------------------------------------------------------
    def b9(self):
        ns = sorted({int(m.group(1)) for f in os.listdir(self.raw)
                     for m in [re.match(r"b9_n(\d+)_agent\.json$", f)] if m})
        if not ns:
            return self.row(9, "Open MPI 5 tree launch vs N", "not run", "", "", "", None)
        kinds = (("agent", "k8s-agent"), ("sshkex", "ssh, same kex"), ("ssh", "ssh, default kex"))
        lines = ["### 9. Open MPI 5 tree spawn vs N pods (`mpirun -np N sleep 1`, radix 16)", "",
                 "k8s-agent with its settings as `-o Key=Value` in `PRTE_MCA_plm_ssh_args` (PRRTE cuts them at "
                 "`=` for the workers' prteds); ssh with `-F ssh_config`, the one spelling that survives the cut "
                 "(same kex: `KexAlgorithms curve25519-sha256` in that file). Each rank sleeps 1 s: PRRTE 3.0 "
                 "loses ranks that exit at once (prrte#2713).",
                 "", "| N | " + " | ".join(k[1] for k in kinds) + " | ratio (same kex) | ratio (default) |",
                 "|---" * (len(kinds) + 3) + "|"]
        pts = {k: [] for k, _ in kinds}
        for n in ns:
            st = {}
            for k, _ in kinds:
                t = hyperfine_single(self.raw, "b9_n%d_%s" % (n, k))
                st[k] = stats(t) if t else None
                if st[k]:
                    pts[k].append((n, st[k]["median"]))
            ratio = lambda o: ("%.2f×" % (st["agent"]["median"] / st[o]["median"])
                               if st["agent"] and st[o] else "—")
            lines.append("| %d | %s | %s | %s |" % (
                n, " | ".join(fmt_ms(st[k]) if st[k] else "did not finish" for k, _ in kinds),
                ratio("sshkex"), ratio("ssh")))
        sl = {k: slope(pts[k]) for k, _ in kinds}
        ms = lambda x: "%.1f ms" % x if x == x else "—"
        lines += ["", "Per extra pod (least-squares slope of the median): %s." % ", ".join(
            "%s %s" % (name, ms(sl[k])) for k, name in kinds)]
        sa = sl["agent"]
        for k, name in kinds[1:]:
            ss = sl[k]
            ok = sa == sa and ss == ss and ss > 0
            self.row(9, "Open MPI 5 tree, cost per extra pod vs %s (N=%s)" % (
                name, "..".join(map(str, (ns[0], ns[-1])))),
                ms(sa) + "/host", ms(ss) + "/host", "%.2f×" % (sa / ss) if ok else "—", "≤ 0.4×",
                (sa / ss <= 0.4) if ok else None)
        self.details.append("\n".join(lines))

    # 8 ----------------------------------------------------------------------
    def b8(self):
        path = os.path.join(self.raw, "b8_cpu.txt")
        if not os.path.exists(path):
            return self.row(8, "launcher CPU per host", "not run", "", "", "", None)
        kinds = [("agent", "k8s-agent"), ("agent-shared", "k8s-agent --lookup-cache 5s"),
                 ("ssh", "ssh (default kex)"), ("ssh-kex", "ssh -o KexAlgorithms=curve25519-sha256")]
        per = {k: [] for k, _ in kinds}
        fails = {k: 0 for k, _ in kinds}
        n = 0
        for line in open(path):
            # "KIND n=N fails=F wall_ms=W <shell user> <shell sys> <children user> <children sys>"
            m = re.match(r"(agent-shared|agent|ssh-kex|ssh) n=(\d+) fails=(\d+) wall_ms=\d+ .*?(\d+)m([\d.]+)s "
                         r"(\d+)m([\d.]+)s$", line)
            if not m:
                continue
            kind, n = m.group(1), int(m.group(2))
            cpu_s = 60 * int(m.group(4)) + float(m.group(5)) + 60 * int(m.group(6)) + float(m.group(7))
            per[kind].append(1000.0 * cpu_s / n)
            fails[kind] += int(m.group(3))
        if not per["agent"] or not per["ssh"]:
            return self.row(8, "launcher CPU per host", "incomplete", "", "", "", None)
        st = {k: stats(v) for k, v in per.items() if v}
        # Against ssh with the same key exchange where it ran (older raw data has only the default).
        base = "ssh-kex" if "ssh-kex" in st else "ssh"
        sb = st[base]
        for k, goal in (("agent", None), ("agent-shared", 0.25)):
            if k not in st:
                continue
            ratio = st[k]["median"] / sb["median"]
            self.row(8, "launcher CPU per host (%d concurrent `true`, user+sys), %s vs %s" % (
                n, dict(kinds)[k], dict(kinds)[base]), fmt_ms(st[k], digits=1), fmt_ms(sb, digits=1),
                "%.2f×" % ratio, "≤ 5 ms, ≤ 0.25×" if goal else "",
                (st[k]["median"] <= 5.0 and ratio <= goal) if goal else None)
        lines = [
            "### 8. Launcher CPU per host", "",
            "%d clients started at once in the launcher pod, each running `true` on its own ready pod; the "
            "shell's `times` gives their summed user+system CPU, divided by %d. %d rounds; failures: %s." % (
                n, n, len(per["agent"]), ", ".join("%s %d" % (name, fails[k]) for k, name in kinds if per[k])),
            "", "| | CPU per host, median (p5-p95) | vs %s |" % dict(kinds)[base], "|---|---|---|"]
        for k, name in kinds:
            if k in st:
                lines.append("| %s | %s | %.2f× |" % (name, fmt_ms(st[k], digits=1),
                                                      st[k]["median"] / sb["median"]))
        self.details.append("\n".join(lines))

    def plot(self, dat, ns):
        if not shutil.which("gnuplot"):
            return None
        png = os.path.join(self.out, "launch_vs_n.png")
        title = "mpirun launch time vs pods — %s, %s cores, %s" % (
            self.meta.get("date", "?"), self.meta.get("nproc", "?"), self.meta.get("cpu", "?"))
        script = r"""
set terminal pngcairo size 960,600 font ",11" noenhanced
set output '%(png)s'
set title '%(title)s'
set xlabel 'worker pods N (one rank each)'
set ylabel 'mpirun -np N true, median (ms); bars p5-p95'
set logscale x 2
set xtics (%(xtics)s)
set xrange [%(xlo)s:%(xhi)s]
set yrange [0:*]
set key top left
set grid
plot '%(dat)s' u 1:2:3:4 w yerrorlines lw 2 lc rgb '#1f77b4' t 'k8s-agent, tree spawn', \
     '' u 1:5:6:7 w yerrorlines lw 2 lc rgb '#d62728' t 'ssh (default kex), tree spawn', \
     '' u 1:8:9:10 w yerrorlines lw 2 dt 2 lc rgb '#1f77b4' t 'k8s-agent, no_tree_spawn', \
     '' u 1:11:12:13 w yerrorlines lw 2 dt 2 lc rgb '#d62728' t 'ssh (default kex), no_tree_spawn', \
     '' u 1:14:15:16 w yerrorlines lw 2 lc rgb '#2ca02c' t 'ssh -o KexAlgorithms=curve25519-sha256, tree spawn', \
     '' u 1:17:18:19 w yerrorlines lw 2 dt 2 lc rgb '#2ca02c' t 'ssh -o KexAlgorithms=curve25519-sha256, no_tree_spawn'
""" % {"png": png, "title": title.replace("'", ""), "dat": dat, "xlo": ns[0] / 1.25, "xhi": ns[-1] * 1.25,
       "xtics": ", ".join(map(str, ns))}
        for term in ("pngcairo size 960,600 font \",11\" noenhanced", "png size 960,600 noenhanced"):
            s = re.sub(r"set terminal .*", "set terminal " + term, script, count=1)
            r = subprocess.run(["gnuplot"], input=s, text=True, capture_output=True)
            if r.returncode == 0 and os.path.exists(png):
                return png
        sys.stderr.write("gnuplot failed: %s\n" % r.stderr)
        return None

    def write(self):
        m = self.meta
        head = [
            "# k8s-agent vs OpenSSH: benchmark results", "",
            "%s · %s mode · %s × %s, %s MB RAM, kernel %s · load at start %s" % (
                m.get("date", "?"), m.get("mode", "?"), m.get("nproc", "?"), m.get("cpu", "?"),
                m.get("mem_total_mb", "?"), m.get("kernel", "?"), m.get("load_at_start", "?")),
            "%s · libssh2 %s · %s · commit %s" % (m.get("openssh", "?"), m.get("libssh2", "?"),
                                                  m.get("openmpi", "?"), m.get("commit", "?")), "",
            "Medians with p5/p95 over the runs; ratio = k8s-agent / ssh (for throughput: agent MiB/s ÷ ssh "
            "MiB/s), both measured in the same run on the same bed (`bench/run.sh`). Clients run in the "
            "launcher pod; ssh is `ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
            "-o BatchMode=yes` (default kex), k8s-agent uses in-cluster credentials and strict known_hosts.",
            "",
            "| # | measurement | k8s-agent | ssh | ratio | target | |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in self.rows:
            head.append("| " + " | ".join(str(x) for x in r) + " |")
        text = "\n".join(head) + "\n\n" + "\n\n".join(self.details) + "\n"
        with open(os.path.join(self.out, "latest.md"), "w") as f:
            f.write(text)
        with open(os.path.join(self.raw, "summary.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["bench", "measurement", "agent", "ssh", "ratio", "target", "verdict"])
            for r in self.csv:
                w.writerow([re.sub(r"</?sub>", "", str(x)) for x in r])
        return text


def slope(pts):
    if len(pts) < 2:
        return float("nan")
    n = len(pts)
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else float("nan")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    rep = Report(sys.argv[1], sys.argv[2])
    for b in (rep.b1, rep.b2, rep.b3, rep.b4, rep.b5, rep.b6, rep.b7, rep.b8, rep.b9):
        try:
            b()
        except Exception as e:  # one broken input must not hide the others
            rep.row("?", "%s: report error %s" % (b.__name__, e), "", "", "", "", None)
    print(rep.write())
    return 0


if __name__ == "__main__":
    sys.exit(main())
