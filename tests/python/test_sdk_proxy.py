"""scripts/sdk_proxy.py, which the "sdk suites 2 nodes" step of
scripts/test.sh puts in front of two herald nodes: each new connection goes
to the next node in turn, and bytes pass unchanged both ways."""

import os
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node(name):
    """A server that answers each connection with its name and then echoes."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                conn.sendall(name)
                while data := conn.recv(65536):
                    conn.sendall(data)

    threading.Thread(target=serve, daemon=True).start()
    return srv


def _dial(port, deadline):
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_alternates_and_copies():
    a, b = _node(b"A"), _node(b"B")
    port = _free_port()
    proxy = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, "scripts", "sdk_proxy.py"), str(port),
         str(a.getsockname()[1]), str(b.getsockname()[1])])
    try:
        deadline = time.monotonic() + 10
        seen = []
        for _ in range(4):
            with _dial(port, deadline) as c:
                seen.append(c.recv(1))
                payload = os.urandom(200_000)
                c.sendall(payload)
                got = b""
                while len(got) < len(payload):
                    got += c.recv(65536)
                assert got == payload
        assert seen == [b"A", b"B", b"A", b"B"]
    finally:
        proxy.kill()
        proxy.wait()
        a.close()
        b.close()
