#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the idle-path layout of the agent binary.

The functions listed in launcher/idle_path.order must be defined in the
binary and lie within LIMIT_KB of text, so an idle agent faults back a few
64 KB windows (scripts/idle_path_order.sh says why). Without the ordering
the same functions span the whole 5 MB of .text. A few may be gone (a
renamed function, a lambda's number): the list then only lost those; more
than a tenth gone means it is stale.

usage: idle_path_layout.py ORDER_FILE BINARY [LIMIT_KB]
NM (default nm) names the nm that reads BINARY: aarch64-linux-gnu-nm for the
cross-built one (tests/portable/arm64_test.sh).
"""
import os
import subprocess
import sys


def main():
    order, binary = sys.argv[1], sys.argv[2]
    limit_kb = int(sys.argv[3]) if len(sys.argv) > 3 else 512
    want = set()
    with open(order) as f:
        for line in f:
            name = line.split("#", 1)[0].strip()
            if name:
                want.add(name)
    if not want:
        sys.exit(f"FAIL: no function listed in {order}")
    nm = subprocess.run([os.environ.get("NM", "nm"), "-S", "--defined-only", binary],
                        capture_output=True, text=True)
    if nm.returncode != 0:
        sys.exit(f"FAIL: nm cannot read {binary}: {nm.stderr.strip()}")
    found = {}
    for line in nm.stdout.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[2] in "tTwW" and parts[3] in want:
            found.setdefault(parts[3], (int(parts[0], 16), int(parts[1], 16)))
    missing = sorted(want - found.keys())
    if missing:
        print(f"{len(missing)} of {len(want)} listed functions are not defined "
              f"in {binary}, e.g. {missing[:3]}: "
              "scripts/idle_path_order.sh regenerates the list")
    if len(missing) * 10 > len(want):
        sys.exit("FAIL: more than a tenth of the list is gone")
    lo = min(a for a, _ in found.values())
    hi = max(a + s for a, s in found.values())
    total = sum(s for _, s in found.values())
    span_kb = (hi - lo) // 1024
    print(f"{len(found)} functions, {total // 1024} KiB of code, "
          f"within {span_kb} KiB")
    if span_kb > limit_kb:
        sys.exit(f"FAIL: they span {span_kb} KiB, more than {limit_kb}: "
                 "the link did not order them (launcher/CMakeLists.txt)")


if __name__ == "__main__":
    main()
