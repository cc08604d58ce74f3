#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A TCP listener that accepts and never speaks (a hung sshd).

Usage: silent_listener.py ADDR PORT ACCEPTED_FILE
Appends one line to ACCEPTED_FILE per accepted connection and holds every
connection open until killed.
"""
import socket
import sys


def main():
    addr, port, accepted = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(16)
    held = []
    while True:
        conn, _ = srv.accept()
        held.append(conn)
        with open(accepted, "a") as f:
            f.write("accepted\n")


if __name__ == "__main__":
    main()
