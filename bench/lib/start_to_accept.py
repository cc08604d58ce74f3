#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""usage: start_to_accept.py RUNS PORT PIDFILE -- COMMAND...

Starts COMMAND (an sshd in the foreground) RUNS times in this network
namespace and prints, one per line, the milliseconds from just before the
fork to the first TCP connection to 127.0.0.1:PORT that the server accepts
(connect() polled every 0.5 ms, each attempt closed at once). Between runs
it sends SIGTERM and waits for the process, so the next start binds the
same port; PIDFILE (may be "-") is removed too. Exits 1 if a run never
accepts within 10 s or the server exits first.
"""
import os
import signal
import socket
import subprocess
import sys
import time


def one_run(port, pidfile, argv):
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        while time.monotonic() - t0 < 10:
            if proc.poll() is not None:
                sys.exit("server exited with %d before accepting" % proc.returncode)
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.connect(("127.0.0.1", port))
                return (time.monotonic() - t0) * 1000.0
            except OSError:
                time.sleep(0.0005)
            finally:
                s.close()
        sys.exit("no connection accepted within 10 s")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        if pidfile != "-" and os.path.exists(pidfile):
            os.unlink(pidfile)


def main():
    runs, port, pidfile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    argv = sys.argv[sys.argv.index("--") + 1:]
    for _ in range(runs):
        print("%.2f" % one_run(port, pidfile, argv), flush=True)


if __name__ == "__main__":
    main()
