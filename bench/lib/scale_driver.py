#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""1,000 hosts simulated: many k8s-agent --wait-only processes against the
fake API server with its APF-like limit, pods becoming Running in a wave.

Runs inside a network namespace that bench/scale.sh made (loopback only):
starts the fake API server on 127.0.0.1:443 and K sshds on 127.0.0.2..,
creates N Pending pods whose IPs spread over the sshds, spawns N agents at
once (one per host, as 64 tree-spawn daemons would start 64 agents each),
makes the pods Running in a shuffled wave over WAVE seconds, reaps every
agent with wait4() (peak RSS and CPU time per agent) and writes a JSON
result. See bench/scale.sh for the knobs.
"""

import argparse
import hashlib
import collections
import ctypes
import http.client
import json
import os
import random
import re
import ssl
import subprocess
import sys
import threading
import time


def now_us():
    return time.time_ns() // 1000


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def percentile(values, p):
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1)))))
    return v[k]


class Control:
    """The fake server's /_control API over one kept-alive TLS connection."""

    def __init__(self, port, ca, token):
        self.port, self.token = port, token
        self.ctx = ssl.create_default_context(cafile=ca)
        self.conn = None

    def call(self, method, path, body=None):
        for attempt in range(3):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection(
                        "127.0.0.1", self.port, context=self.ctx, timeout=30)
                data = json.dumps(body).encode() if body is not None else None
                self.conn.request(method, path, body=data, headers={
                    "Authorization": "Bearer " + self.token,
                    "Content-Type": "application/json"})
                resp = self.conn.getresponse()
                out = resp.read()
                if resp.status >= 300:
                    raise RuntimeError("%s %s: %d %s" % (method, path,
                                                         resp.status, out))
                return json.loads(out) if out else None
            except (OSError, http.client.HTTPException):
                self.conn = None
                if attempt == 2:
                    raise
        return None


def start_sshds(d, k):
    pids = []
    for j in range(k):
        addr = "127.0.0.%d" % (2 + j)
        cfg = os.path.join(d, "sshd_config.%d" % j)
        with open(cfg, "w") as f:
            f.write("\n".join([
                "Port 22", "ListenAddress " + addr,
                "HostKey " + os.path.join(d, "host_key"),
                "PidFile " + os.path.join(d, "sshd.%d.pid" % j),
                "PermitRootLogin prohibit-password", "PubkeyAuthentication yes",
                "PasswordAuthentication no", "KbdInteractiveAuthentication no",
                "UsePAM no", "StrictModes no",
                "AuthorizedKeysFile " + os.path.join(d, "authorized_keys"),
                "UseDNS no", "PrintMotd no", "LogLevel ERROR",
                # The point is the API side: never refuse a handshake.
                "MaxStartups 2000:100:4000", "MaxSessions 100", ""]))
        log = open(os.path.join(d, "sshd.%d.log" % j), "a")
        p = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", cfg],
                             stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        pids.append(p)
    for j in range(k):
        pidfile = os.path.join(d, "sshd.%d.pid" % j)
        deadline = time.monotonic() + 10
        while not os.path.exists(pidfile):
            if time.monotonic() > deadline or pids[j].poll() is not None:
                raise RuntimeError("sshd %d did not start" % j)
            time.sleep(0.02)
    return pids


def start_server(d, args):
    log = open(os.path.join(d, "apiserver.out"), "a")
    cmd = [sys.executable, args.fake_server, "--bind", "127.0.0.1",
           "--port", "443", "--cert", os.path.join(d, "server.crt"),
           "--key", os.path.join(d, "server.key"),
           "--token-file", os.path.join(d, "token"),
           "--log", os.path.join(d, "access.log"),
           "--apf-seats", str(args.apf_seats),
           "--apf-queue", str(args.apf_queue),
           "--apf-queue-wait", str(args.apf_queue_wait),
           "--apf-retry-after", str(args.apf_retry_after)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log,
                         stdin=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    if not line.startswith("READY"):
        raise RuntimeError("fake API server did not start: %r" % line)
    return p


class Names:
    """How pods are named and found: "statefulset" pods are w-<i> (HOST is
    the pod name); "jobset" pods are those of one Indexed Job of a JobSet
    (Kubeflow Trainer v2's "node" replicated job), js-node-0-<i>-<random>
    with hostname js-node-0-<i> and subdomain js, labelled as the Job
    controller does since 1.28, and HOST is js-node-0-<i>.js."""

    def __init__(self, kind):
        self.kind = kind

    def pod(self, i):
        if self.kind == "jobset":
            return "js-node-0-%d-%s" % (i, hashlib.sha1(
                str(i).encode()).hexdigest()[:5])
        return "w-%d" % i

    def host_affixes(self):
        return ("js-node-0-", ".js") if self.kind == "jobset" else ("w-", "")

    def host(self, i):
        pre, post = self.host_affixes()
        return "%s%d%s" % (pre, i, post)

    def shorthand(self, i):
        if self.kind == "jobset":
            return {"hostname": "js-node-0-%d" % i, "subdomain": "js",
                    "owner": "Job/js-node-0",
                    "labels": {"batch.kubernetes.io/job-name": "js-node-0",
                               "batch.kubernetes.io/job-completion-index":
                                   str(i),
                               "jobset.sigs.k8s.io/jobset-name": "js"}}
        return {"hostname": "w-%d" % i, "labels": {"role": "worker"}}

    def index_of_request(self, path):
        # By pod name (/pods/NAME or metadata.name=NAME, the name lookup using
        # the hostname) or by the completion-index label.
        m = re.search(r"/pods/(?:w|js-node-0)-(\d+)", path) or re.search(
            r"metadata\.name(?:%3D|=)(?:w|js-node-0)-(\d+)", path) or \
            re.search(r"job-completion-index(?:%3D|=)(\d+)", path)
        return int(m.group(1)) if m else None


def host_of_request(line, names):
    # '"GET /api/v1/namespaces/default/pods/w-12 HTTP/1.1" 200 -' or a watch
    # with fieldSelector=metadata.name%3Dw-12.
    m = re.search(r'"[A-Z]+ (\S+) HTTP/1\.1" (\d+)', line)
    if not m or "/_control" in m.group(1):
        return None, None
    path, code = m.group(1), int(m.group(2))
    i = names.index_of_request(path)
    return (names.host(i) if i is not None else "?"), code


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--fake-server", required=True)
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--sshds", type=int, default=4)
    ap.add_argument("--wave", type=float, default=30.0)
    ap.add_argument("--apf-seats", type=int, default=20,
                    help="0: no APF limit (for comparison)")
    ap.add_argument("--apf-queue", type=int, default=50)
    ap.add_argument("--apf-queue-wait", type=float, default=5.0)
    ap.add_argument("--apf-retry-after", type=int, default=1)
    ap.add_argument("--timeout", default="180s")
    ap.add_argument("--names", choices=("statefulset", "jobset"),
                    default="statefulset", help="see Names")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    names = Names(args.names)
    d, n = args.dir, args.hosts
    token = open(os.path.join(d, "token")).read().strip()
    procs = []
    try:
        server = start_server(d, args)
        procs.append(server)
        procs += start_sshds(d, args.sshds)
        ctl = Control(443, os.path.join(d, "ca.crt"), token)
        for i in range(n):
            ctl.call("PUT", "/_control/pods/default/" + names.pod(i),
                     dict(names.shorthand(i), phase="Pending", podIP=None))
        ctl.call("POST", "/_control/stats/reset")
        if args.apf_seats > 0:
            ctl.call("POST", "/_control/apf/reset")
        with open(os.path.join(d, "access.log"), "a") as f:
            f.write("=== wave starts\n")

        env = {"PATH": "/usr/bin:/bin", "HOME": os.path.join(d, "home"),
               "K8S_AGENT_SERVER": "https://127.0.0.1:443",
               "K8S_AGENT_TOKEN_FILE": os.path.join(d, "token"),
               "K8S_AGENT_CERTIFICATE_AUTHORITY": os.path.join(d, "ca.crt"),
               "K8S_AGENT_NAMESPACE": "default"}
        os.makedirs(env["HOME"], exist_ok=True)
        trace = os.path.join(d, "trace.jsonl")
        argv = [args.agent, "--wait-only", "--timeout", args.timeout,
                "--trace", trace, "-i", os.path.join(d, "id_ed25519"),
                "-o", "UserKnownHostsFile=" + os.path.join(d, "known_hosts"),
                "-o", "StrictHostKeyChecking=yes", "-l", "root"]
        # Peak RSS comes from wait4(), and Linux carries a process's RSS
        # high-water mark across exec: an agent spawned straight from this
        # (20 MB) Python would report at least that. So a small sh forks
        # the agents and exits; as a subreaper this process inherits them
        # and reaps each with its own rusage.
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
            raise OSError(ctypes.get_errno(), "PR_SET_CHILD_SUBREAPER")
        server_cpu0 = cpu_seconds(server.pid)
        t_spawn0 = now_us()
        spawner = subprocess.Popen(
            ["/bin/sh", "-c", 'n=$1; err=$2; pre=$3; post=$4; shift 4; i=0\n'
             'while [ $i -lt $n ]; do\n'
             '  "$@" "$pre$i$post" </dev/null >/dev/null 2>>"$err" &\n'
             '  i=$((i + 1))\n'
             'done', "sh", str(n), os.path.join(d, "agents.err"),
             *names.host_affixes()] + argv,
            env=env, stdin=subprocess.DEVNULL)
        spawner.wait()
        t_spawn1 = now_us()

        reaped = []

        def reaper():
            while len(reaped) < n:
                try:
                    pid, status, ru = os.wait4(-1, 0)
                except ChildProcessError:
                    return
                if any(pid == p.pid for p in procs):
                    continue  # A server or sshd died: the result says so.
                reaped.append({
                    "rc": os.waitstatus_to_exitcode(status),
                    "maxrss_kb": ru.ru_maxrss,
                    "cpu_s": ru.ru_utime + ru.ru_stime,
                    "t_exit_us": now_us()})

        rt = threading.Thread(target=reaper, daemon=True)
        rt.start()

        # The wave: every pod Running at its own moment over WAVE seconds,
        # in an order unrelated to the spawn order.
        order = list(range(n))
        random.Random(42).shuffle(order)
        running_at = {}
        t0 = time.monotonic()
        for k, i in enumerate(order):
            target = t0 + args.wave * k / n
            delay = target - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            ctl.call("PUT", "/_control/pods/default/" + names.pod(i), {
                "phase": "Running",
                "podIP": "127.0.0.%d" % (2 + i % args.sshds), "ready": True})
            running_at[names.host(i)] = now_us()
        t_wave_end = now_us()
        rt.join(timeout=600)
        server_cpu1 = cpu_seconds(server.pid)
        t_done = now_us()
        apf = ctl.call("GET", "/_control/apf") if args.apf_seats > 0 else {}
        stats = ctl.call("GET", "/_control/stats")
    finally:
        # Agents still alive (the wave failed): they are in this namespace,
        # which bench/scale.sh empties by pid and deletes.
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()

    # ---- analysis --------------------------------------------------------
    per_host = collections.Counter()
    per_host_429 = collections.Counter()
    codes = collections.Counter()
    started = False
    for line in open(os.path.join(d, "access.log")):
        if line.startswith("=== wave starts"):
            started = True
            continue
        if not started:
            continue
        host, code = host_of_request(line, names)
        if host is None:
            continue
        per_host[host] += 1
        codes[code] += 1
        if code == 429:
            per_host_429[host] += 1
    ready_at, seen_running = {}, {}
    for line in open(trace):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == "ssh_ready":
            ready_at.setdefault(e["host"], e["t_wall_us"])
        if e.get("event") == "pod_running":
            seen_running.setdefault(e["host"], e["t_wall_us"])
    lat = [(ready_at[h] - running_at[h]) / 1000.0 for h in running_at
           if h in ready_at]
    seen = [(seen_running[h] - running_at[h]) / 1000.0 for h in running_at
            if h in seen_running]
    res = reaped
    failures = sum(1 for r in res if r["rc"] != 0) + (n - len(res))
    reqs = [per_host.get(names.host(i), 0) for i in range(n)]
    wall = (t_done - t_spawn0) / 1e6
    out = {
        "hosts": n, "names": args.names, "sshds": args.sshds,
        "wave_s": args.wave,
        "apf_config": apf.get("config"), "apf": apf,
        "spawn_s": (t_spawn1 - t_spawn0) / 1e6,
        "wave_actual_s": (t_wave_end - t_spawn1) / 1e6,
        "wall_s": wall,
        "failures": failures, "exit_codes": dict(collections.Counter(
            r["rc"] for r in res)),
        "requests_total": sum(reqs),
        "requests_per_host_mean": sum(reqs) / float(n),
        "requests_per_host_max": max(reqs),
        "requests_per_host_hist": dict(sorted(collections.Counter(
            reqs).items())),
        "http_codes": {str(k): v for k, v in sorted(codes.items())},
        "http_429": codes.get(429, 0),
        "hosts_with_429": len(per_host_429),
        "server_stats_total": stats.get("total"),
        "requests_unattributed": per_host.get("?", 0),
        "max_pods_per_answer": stats.get("max_pods_per_answer"),
        "running_to_ssh_ready_ms": {
            "n": len(lat), "p50": percentile(lat, 50),
            "p90": percentile(lat, 90), "p99": percentile(lat, 99),
            "max": max(lat) if lat else None},
        "running_to_agent_sees_running_ms": {
            "n": len(seen), "p50": percentile(seen, 50),
            "p99": percentile(seen, 99)},
        "agent_peak_rss_kb": {
            "max": max((r["maxrss_kb"] for r in res), default=None),
            "p50": percentile([r["maxrss_kb"] for r in res], 50)},
        "agent_cpu_ms": {
            "mean": 1000 * sum(r["cpu_s"] for r in res) / max(1, len(res)),
            "p50": 1000 * (percentile([r["cpu_s"] for r in res], 50) or 0),
            "max": 1000 * max((r["cpu_s"] for r in res), default=0),
            "total_s": sum(r["cpu_s"] for r in res)},
        "fake_server_cpu_s": server_cpu1 - server_cpu0,
        "fake_server_cpu_share_of_one_core": (server_cpu1 - server_cpu0)
        / max(1e-9, wall),
        "load_after": open("/proc/loadavg").read().split()[:3],
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
