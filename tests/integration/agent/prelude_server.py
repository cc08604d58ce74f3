#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A listener that writes lines and never an SSH identification string.

Usage: prelude_server.py BYTES COUNT_FILE READY_FILE
Listens on a port of its own (written to READY_FILE). Each connection adds
a line to COUNT_FILE, is sent BYTES bytes of text lines (what a wrapper
printing to the socket, or a service that is not sshd, sends) and is then
held open, silent, until the client closes it.
"""
import socket
import sys
import threading

from proxy_lib import listen_and_announce

LINE = b"this is not an sshd, just a chatty service on this port\r\n"


def serve(conn, size):
    try:
        conn.sendall((LINE * (size // len(LINE) + 1))[:size])
        while conn.recv(4096):
            pass
    except OSError:
        pass  # The client gave up mid-stream: what a good client does.
    finally:
        conn.close()


def main():
    size, count_file, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    srv = listen_and_announce(ready)
    while True:
        conn, _ = srv.accept()
        with open(count_file, "a") as f:
            f.write("connection\n")
        threading.Thread(target=serve, args=(conn, size), daemon=True).start()


if __name__ == "__main__":
    main()
