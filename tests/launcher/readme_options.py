#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""README's option table against k8s-agent --help: every row's flag is an
option of --help, its variable is the one --help lists for that option, a
duration default is --help's, the namespace default names the same places
in the same order, and the DNS HOST example is the same name.

Usage: readme_options.py README.md K8S_AGENT_BINARY
"""
import re
import subprocess
import sys

readme_path, agent = sys.argv[1:3]
readme = open(readme_path).read()
usage = subprocess.run([agent, "--help"], check=True, capture_output=True,
                       text=True).stdout
flat = " ".join(usage.split())  # --help wraps at 79 columns.
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


# "--name ARG   help..." blocks of --help, joined across wrapped lines.
helps = {}
for m in re.finditer(r"^  --([a-z-]+)(?: [A-Z]+)?\s+(.*(?:\n {31}.*)*)",
                     usage, re.M):
    helps[m.group(1)] = " ".join(m.group(2).split())
envs = dict(re.findall(r"^  (K8S_AGENT_[A-Z_]+) +--([a-z-]+)$", usage, re.M))

rows = re.findall(r"^\| `--([a-z-]+)[^`]*` \| `([A-Z0-9_]+)` \| ([^|]*) \|",
                  readme, re.M)
check(len(rows) >= 10, f"README has the option table ({len(rows)} rows)")
for name, env, default in rows:
    check(name in helps, f"--{name} is an option of --help")
    check(envs.get(env) == name,
          f"README's variable for --{name} ({env}) is --help's "
          f"({[e for e, n in envs.items() if n == name]})")
    want = re.search(r"default:? ([0-9]+[a-z]+)\b", helps.get(name, ""))
    if want:
        check(f"`{want.group(1)}`" in default,
              f"--{name}: README's default {default.strip()!r} is "
              f"--help's {want.group(1)}")

# The namespace: the same places, in the same order.
places = ["third label", "kubeconfig context", "service account", "default"]
ns_readme = dict((n, d) for n, _, d in rows).get("namespace", "")
ns_help = helps.get("namespace", "")
for text, where in ((ns_readme, "README"), (ns_help, "--help")):
    pos, found = 0, True
    for p in places:  # Each after the one before.
        pos = text.find(p, pos)
        found = found and pos >= 0
        pos = max(pos, 0) + len(p)
    check(found,
          f"{where}'s namespace default names {places} in order: {text!r}")

# The DNS name example.
dns = re.compile(r"w-0\.[a-z0-9-]+\.ns\.svc\.cluster\.local")
check(dns.findall(readme)[:1] == dns.findall(flat)[:1] != [],
      f"one DNS HOST example: README {dns.findall(readme)[:1]}, "
      f"--help {dns.findall(flat)[:1]}")

sys.exit(1 if failures else 0)
