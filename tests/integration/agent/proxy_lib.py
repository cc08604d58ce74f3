# SPDX-License-Identifier: Apache-2.0
"""What the test proxies in front of sshd share: listening, and pairing."""
import os
import socket


def listen_and_announce(ready_file):
    """Listens on a port of the kernel's choice and writes it to ready_file.

    Binding port 0 here (not a port chosen earlier and let go) means no
    other test can take the port in between; the file appears whole, by
    rename, once the socket is listening.
    """
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    tmp = ready_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(tmp, ready_file)
    return srv


def accept_pair(srv, target_port, peer):
    """Accepts a client, connects it to sshd; records both in peer."""
    client, _ = srv.accept()
    upstream = socket.create_connection(("127.0.0.1", target_port))
    peer[client], peer[upstream] = upstream, client
    return client, upstream
