#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""realapi r14's verdict: requests per host from the audit log, Running ->
ssh ready from the wave's times and the agents' trace.

usage: r14_summary.py REQUESTS RUNNING_AT TRACE N
  REQUESTS    "verb code uri" lines (ra_audit_requests)
  RUNNING_AT  "POD T_WALL_US" lines (realapi_pods.py set-many)
Exit 0 when every host got at most 2 admitted requests, each naming the
host (by name or by its completion-index label), and all N got ssh ready.
"""

import collections
import json
import re
import sys


def index_of(host):  # "js-node-0-12.js" or "js-node-0-12-0abcd" -> 12
    return int(host.split(".")[0].split("-")[3])


def main(reqs_path, running_path, trace_path, n):
    per_host, refused, wide = collections.Counter(), 0, []
    for line in open(reqs_path):
        verb, code, uri = line.rstrip("\n").split(" ", 2)
        m = re.search(r"metadata\.name%3Djs-node-0-(\d+)(?:&|$)", uri) or \
            re.search(r"job-completion-index%3D(\d+)", uri)
        if not m:
            wide.append("%s %s %s" % (verb, code, uri))
        elif code == "429":
            refused += 1
        else:
            per_host[int(m.group(1))] += 1
    ran = {}
    for line in open(running_path):
        name, t = line.split()
        ran[index_of(name)] = int(t)
    ready, seen = {}, {}
    for line in open(trace_path):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == "ssh_ready":
            ready.setdefault(index_of(e["host"]), e["t_wall_us"])
        if e.get("event") == "pod_running":
            seen.setdefault(index_of(e["host"]), e["t_wall_us"])
    lat = sorted((ready[i] - ran[i]) / 1000.0 for i in ran if i in ready)
    saw = sorted((seen[i] - ran[i]) / 1000.0 for i in ran if i in seen)
    hist = dict(sorted(collections.Counter(
        per_host[i] for i in range(n)).items()))
    print("    requests per host (admitted): %s; refused (429): %d; "
          "without the host's name or label: %d" % (hist, refused, len(wide)))
    for w in wide[:3]:
        print("      " + w)
    for what, v in (("the agent sees Running", saw), ("ssh ready", lat)):
        if not v:
            continue
        def pct(p):
            return v[min(len(v) - 1, len(v) * p // 100)]
        print("    Running -> %s over %d hosts: p50 %.0f ms, p90 %.0f ms, "
              "p99 %.0f ms, max %.0f ms"
              % (what, len(v), pct(50), pct(90), pct(99), v[-1]))
    worst = max((per_host[i] for i in range(n)), default=0)
    return 0 if len(lat) == n and not wide and worst <= 2 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
