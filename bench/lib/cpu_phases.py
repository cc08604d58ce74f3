#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Splits one agent launch's instructions (a callgrind profile) into phases.

usage: cpu_phases.py CALLGRIND_OUT...   (prints a Markdown table; several profiles give min/max)

Instructions, not seconds: callgrind counts the same total for the same binary and inputs whatever else the
machine runs, so the split is repeatable on a shared 2-core machine. A phase is the inclusive cost of the
functions that begin it; "other" is what no phase claims (the event loop, logging, the stdio relay, exit).
"""
import re
import subprocess
import sys

# (phase, [function-name substrings whose inclusive costs add up to it]); the first match of a row wins.
PHASES = [
    ("process start and exit outside main (loader, static init, exit handlers)", None),
    ("options, ssh_config, kubeconfig / in-cluster config", ["k8s_agent::ParseOptions(", "k8s_agent::kube::LoadClusterConfig(",
                                                              "k8s_agent::ssh::SystemConfigEnv("]),
    ("runtime set-up (curl multi, libssh2 init, known_hosts)", ["k8s_agent::AgentRuntime::Create("]),
    ("TLS: OpenSSL 3 provider and DRBG start (RAND_status)", ["RAND_status"]),
    ("TLS: SSL_CTX_new (method fetches, CA load)", ["SSL_CTX_new"]),
    ("TLS: handshake with the API server (certificate parse, verify, ECDHE)", ["ossl_connect_step2"]),
    ("API request and pod JSON (curl outside TLS set-up)", ["k8s_agent::kube::CurlTransport::OnFdReady("]),
    ("lookup answered from the shared pod list (--lookup-cache; its key's SHA-256 starts OpenSSL)",
     ["k8s_agent::kube::SharedLookupTransport::OnTimer("]),
    ("SSH: key exchange and host key (libssh2_session_handshake)", ["libssh2_session_handshake"]),
    ("SSH: known_hosts check", ["k8s_agent::ssh::VerifyHostKey("]),
    ("SSH: public-key auth (sign)", ["k8s_agent::ssh::PublicKeyAuth::Step("]),
    ("SSH: exec channel and stdio relay", ["k8s_agent::ssh::ExecChannel::Pump(", "Libssh2Connection::Exec("]),
]
LINE = re.compile(r"^\s*([\d,]+) \([ \d.]+%\)\s+(.*)$")


def inclusive(path):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path], capture_output=True,
                         text=True, check=True).stdout
    total, costs = 0, {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        n, name = int(m.group(1).replace(",", "")), m.group(2)
        if name.startswith("PROGRAM TOTALS"):
            total = n
            continue
        # One name may appear per object file; keep the largest (the same function).
        costs[name] = max(costs.get(name, 0), n)
    return total, costs


def cost_of(costs, needle):
    # Symbols without debug info print as "???:NAME [obj]"; match the bare name exactly there.
    best = 0
    for name, n in costs.items():
        fn = name.split(":", 1)[1] if name.startswith("???:") else name
        if (fn.split(" [")[0] == needle) if "(" not in needle else (needle in name):
            best = max(best, n)
    return best


def split(path):
    total, costs = inclusive(path)
    # The program's own main, not libc's "(below main)".
    main = max((n for k, n in costs.items() if re.search(r":main \[", k)), default=0)
    rows = [total - main]
    for _, needles in PHASES[1:]:
        rows.append(sum(cost_of(costs, s) for s in needles))
    # curl's OnFdReady includes the TLS rows: the API row is what is left of it.
    tls = rows[3] + rows[4] + rows[5]
    curl_other = max(rows[6] - tls, 0)
    rows[6] = curl_other
    rows.append(total - sum(rows))
    return total, rows


def main():
    runs = [split(p) for p in sys.argv[1:]]
    if not runs:
        sys.exit("usage: cpu_phases.py CALLGRIND_OUT...")
    total = min(t for t, _ in runs)
    print("| phase | instructions (M) | share |")
    print("|---|---:|---:|")
    names = [phase for phase, _ in PHASES] + ["other (event loop, logging, exit)"]
    for i, phase in enumerate(names):
        vals = [r[i] for _, r in runs]
        lo, hi = min(vals), max(vals)
        m = f"{lo / 1e6:.2f}" if lo == hi or hi - lo < 0.01e6 else f"{lo / 1e6:.2f}-{hi / 1e6:.2f}"
        print(f"| {phase} | {m} | {100 * lo / total:.0f} % |")
    print(f"| **total** | **{total / 1e6:.2f}**" + (f"-{max(t for t, _ in runs) / 1e6:.2f}" if len(runs) > 1 else "")
          + " | 100 % |")


if __name__ == "__main__":
    main()
