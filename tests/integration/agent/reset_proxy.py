#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A TCP proxy that resets the client when a trigger file appears.

Usage: reset_proxy.py TARGET_PORT TRIGGER_FILE READY_FILE
Forwards a port of its own (written to READY_FILE) to 127.0.0.1:TARGET_PORT.
Whenever TRIGGER_FILE exists (sshd's AuthorizedKeysCommand creates it, so
the client is waiting for an authentication answer), every open client
connection is closed with SO_LINGER 0, which sends a TCP RST, and the file
is removed.
"""
import os
import select
import socket
import struct
import sys

from proxy_lib import accept_pair, listen_and_announce


def main():
    target_port, trigger, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    srv = listen_and_announce(ready)
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
                c, _ = accept_pair(srv, target_port, peer)
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
