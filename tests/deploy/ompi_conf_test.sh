#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Checks the MCA presets against the installed Open MPI: every parameter
# in ompi-conf/openmpi-mca-params.conf exists (ompi_info --all --parsable),
# is not deprecated, and Open MPI, reading the file itself, takes each value
# as written (an enum typo such as "nnone" is rejected). The Open MPI 5 file
# cannot be checked the same way without prte_info; its agent line is.
# Usage: ompi_conf_test.sh [REPO_DIR]
set -euo pipefail

repo="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
if ! command -v ompi_info >/dev/null; then
  echo "SKIP: ompi_info not installed (apt-get install openmpi-bin)"
  exit 77
fi
tmp="$(mktemp -d /tmp/k8s-deploy-ompi.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
conf="$repo/ompi-conf/openmpi-mca-params.conf"

# Only this file is read: mca_base_param_files replaces the default list
# (~/.openmpi/mca-params.conf, /etc/openmpi/openmpi-mca-params.conf).
HOME="$tmp" OMPI_MCA_mca_base_param_files="$conf" \
  ompi_info --all --parsable >"$tmp/info.txt" 2>&1

/usr/bin/python3 - "$conf" "$tmp/info.txt" "$repo/ompi-conf/prte-mca-params.conf" <<'EOF'
import re, sys

conf, info_path, prte = sys.argv[1:4]
failures = []

def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)

def read_conf(path):
    """name -> (value, line number); MCA file syntax: name = value."""
    params = {}
    for no, raw in enumerate(open(path), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9_]+)\s*=\s*(.*)", line)
        check(m is not None, f"{path}:{no} is 'name = value'")
        if m:
            check(m.group(1) not in params, f"{m.group(1)} set once")
            params[m.group(1)] = (m.group(2), no)
    return params

info = open(info_path).read()
check("invalid value" not in info.lower(), "ompi_info accepts every value in the file")
attrs = {}  # name -> {attribute: [values]}
for line in info.splitlines():
    m = re.match(r"mca:[^:]+:[^:]+:param:([^:]+):(.*)", line)
    if m:
        key, _, rest = m.group(2).partition(":")
        attrs.setdefault(m.group(1), {}).setdefault(key, []).append(rest)

params = read_conf(conf)
check(len(params) > 0, f"{conf} sets parameters")
check(params.get("plm_rsh_agent", ("",))[0] == "k8s-agent", "plm_rsh_agent = k8s-agent")
booleans = {"1": "true", "true": "true", "yes": "true", "enabled": "true",
            "0": "false", "false": "false", "no": "false", "disabled": "false"}
for name, (value, no) in params.items():
    a = attrs.get(name)
    check(a is not None, f"{name} exists in ompi_info --all")
    if a is None:
        continue
    check(a.get("deprecated") == ["no"], f"{name} is not deprecated")
    check(a.get("source", [""])[0] == f"file ({conf}:{no})", f"{name} is read from the file")
    got = a.get("value", [""])[0]
    if a.get("type") == ["bool"]:
        want = booleans.get(value.lower(), f"<not a boolean: {value}>")
    else:
        want = value
        # Enums may be given by number; ompi_info prints the name.
        for e in a.get("enumerator", []):
            num, _, label = e.removeprefix("value:").partition(":")
            if value == num:
                want = label
    check(got == want, f"{name}: Open MPI reads {got!r}, the file means {want!r}")

prte_params = read_conf(prte)
check(prte_params.get("plm_ssh_agent", ("",))[0] == "k8s-agent",
      "prte-mca-params.conf: plm_ssh_agent = k8s-agent")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("PASS")
EOF
