# SPDX-License-Identifier: Apache-2.0
"""An HTTP CONNECT proxy for the API server tests.

  connect_proxy.py MODE READY_FILE LOG_FILE
MODE "tunnel" relays; "deny" answers every CONNECT with 407. Each CONNECT
line is appended to LOG_FILE.
"""
import socket
import sys
import threading

from proxy_lib import listen_and_announce


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client, mode, log_file):
    head = b""
    while b"\r\n\r\n" not in head:
        data = client.recv(4096)
        if not data:
            client.close()
            return
        head += data
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    with open(log_file, "a") as f:
        f.write(line + "\n")
    parts = line.split()
    if mode == "deny" or len(parts) < 2 or parts[0] != "CONNECT":
        client.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                       b"Proxy-Authenticate: Basic realm=\"test\"\r\n"
                       b"Content-Length: 0\r\n\r\n")
        client.close()
        return
    host, port = parts[1].rsplit(":", 1)
    upstream = socket.create_connection((host.strip("[]"), int(port)))
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    pump(upstream, client)


def main():
    mode, ready_file, log_file = sys.argv[1:4]
    srv = listen_and_announce(ready_file)
    while True:
        client, _ = srv.accept()
        threading.Thread(target=serve, args=(client, mode, log_file),
                         daemon=True).start()


if __name__ == "__main__":
    main()
