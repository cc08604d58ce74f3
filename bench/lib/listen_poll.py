#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Timestamps the moment a TCP listener on PORT appears in the caller's network namespace.
"""Listen-socket poller for the readiness benchmark.

usage: listen_poll.py PORT OUT_FILE [LIMIT_S] [INTERVAL_MS]

Run it inside a worker pod's netns (`ip netns exec NS listen_poll.py 22 F`).
It creates OUT_FILE.armed once it has checked that nothing listens yet, then
reads /proc/net/tcp every INTERVAL_MS (default 1 ms) and, when a socket in
state LISTEN (0A) on PORT shows up, writes "T_WALL_US RESOLUTION_US" to
OUT_FILE: T is the wall clock just before the read that first saw it, and
RESOLUTION the time since the read before (the listener appeared within that
window, so T is late by at most that much). /proc/net/tcp is per network
namespace, so only this pod's sockets are seen. Exit 0 when seen, 1 on
LIMIT_S (default 30) without a listener, 2 if one was already there.
"""
import os
import sys
import time


def listening(hex_port):
    with open("/proc/net/tcp", "rb") as f:
        data = f.read()
    for line in data.split(b"\n")[1:]:
        fields = line.split()
        if len(fields) > 3 and fields[1].endswith(hex_port) and fields[3] == b"0A":
            return True
    return False


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    hex_port = (":%04X" % int(sys.argv[1])).encode()
    out = sys.argv[2]
    limit_s = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
    interval = (float(sys.argv[4]) if len(sys.argv) > 4 else 1.0) / 1000.0
    if listening(hex_port):
        return 2
    with open(out + ".armed", "w") as f:
        f.write("%d\n" % os.getpid())
    deadline = time.monotonic() + limit_s
    prev = time.time_ns()
    while time.monotonic() < deadline:
        before = time.time_ns()
        if listening(hex_port):
            tmp = out + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d %d\n" % (before // 1000, (before - prev) // 1000))
            os.rename(tmp, out)
            return 0
        prev = before
        time.sleep(interval)
    return 1


if __name__ == "__main__":
    sys.exit(main())
