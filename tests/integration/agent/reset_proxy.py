#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A TCP proxy that resets the client when a trigger file appears.

Usage: reset_proxy.py LISTEN_PORT TARGET_PORT TRIGGER_FILE PORT_READY_FILE
Forwards 127.0.0.1:LISTEN_PORT to 127.0.0.1:TARGET_PORT. Whenever
TRIGGER_FILE exists (sshd's AuthorizedKeysCommand creates it, so the
client is waiting for an authentication answer), every open client
connection is closed with SO_LINGER 0, which sends a TCP RST, and the
file is removed.
"""
import os
import select
import socket
import struct
import sys


def main():
    listen_port, target_port = int(sys.argv[1]), int(sys.argv[2])
    trigger, ready = sys.argv[3], sys.argv[4]
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", listen_port))
    srv.listen(16)
    with open(ready, "w") as f:
        f.write("ready\n")
    peer = {}  # socket -> its partner
    clients = set()
    while True:
        readable, _, _ = select.select([srv] + list(peer), [], [], 0.02)
        if os.path.exists(trigger):
            for c in list(clients):
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                             struct.pack("ii", 1, 0))
                other = peer.pop(c)
                peer.pop(other, None)
                c.close()
                other.close()
                clients.discard(c)
            os.unlink(trigger)
            continue
        for s in readable:
            if s is srv:
                c, _ = srv.accept()
                u = socket.create_connection(("127.0.0.1", target_port))
                peer[c], peer[u] = u, c
                clients.add(c)
                continue
            if s not in peer:
                continue
            data = s.recv(65536)
            other = peer[s]
            if not data:
                peer.pop(s)
                peer.pop(other, None)
                clients.discard(s)
                clients.discard(other)
                s.close()
                other.close()
                continue
            other.sendall(data)


if __name__ == "__main__":
    main()
