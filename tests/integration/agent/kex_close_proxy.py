#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A TCP proxy that closes both sides once the SSH key exchange is done.

Usage: kex_close_proxy.py TARGET_PORT COUNT_FILE READY_FILE
Forwards a port of its own (written to READY_FILE) to 127.0.0.1:TARGET_PORT
(a real sshd). It
follows each direction's packets up to SSH_MSG_NEWKEYS (21): until then
they are unencrypted, so the framing (uint32 length, padding length,
payload) is readable. Once both sides have sent NEWKEYS, both sockets are
closed (FIN), as when the connection's sshd process ends right after the
key exchange or something in between cuts it. Every connection
that got that far adds a line to COUNT_FILE.
"""
import select
import sys

from proxy_lib import accept_pair, listen_and_announce

NEWKEYS = 21


class Direction:
    """Parses one direction's plaintext: version line, then packets."""

    def __init__(self):
        self.buf = b""
        self.banner_done = False
        self.newkeys = False

    def feed(self, data):
        if self.newkeys:
            return
        self.buf += data
        while not self.banner_done:
            nl = self.buf.find(b"\n")
            if nl < 0:
                return
            line, self.buf = self.buf[:nl + 1], self.buf[nl + 1:]
            self.banner_done = line.startswith(b"SSH-")
        while len(self.buf) >= 6:
            length = int.from_bytes(self.buf[:4], "big")
            if len(self.buf) < 4 + length:
                return
            if self.buf[5] == NEWKEYS:
                self.newkeys = True
                return
            self.buf = self.buf[4 + length:]


def main():
    target_port, count_file, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    srv = listen_and_announce(ready)
    peer = {}    # socket -> its partner
    parser = {}  # socket -> Direction of the bytes read from it
    while True:
        readable, _, _ = select.select([srv] + list(peer), [], [])
        for s in readable:
            if s is srv:
                c, u = accept_pair(srv, target_port, peer)
                parser[c], parser[u] = Direction(), Direction()
                continue
            if s not in peer:
                continue  # Closed earlier in this round.
            other = peer[s]
            data = s.recv(65536)
            if data:
                parser[s].feed(data)
                other.sendall(data)
            if not data or (parser[s].newkeys and parser[other].newkeys):
                if data:
                    with open(count_file, "a") as f:
                        f.write("closed after NEWKEYS\n")
                for x in (s, other):
                    peer.pop(x, None)
                    parser.pop(x, None)
                    x.close()


if __name__ == "__main__":
    main()
