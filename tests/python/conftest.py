"""Harness for the server API tests: a real Herald node on loopback.

The node is the real `herald serve` (built once per session with `go build`,
or taken from $HERALD_BIN), on a free loopback port. Each test gets its own node
from the `node` fixture; `Node.ws(user)` opens a real WebSocket connection
speaking the JSON client protocol, to check what the API calls did.
"""

import contextlib
import fcntl
import os
import socket
import urllib.request
import json
import pathlib
import select
import signal
import subprocess
import tempfile
import time

import jwt
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = REPO / ".tmp" / "bin" / "herald"
API_KEY = "python-test-key"
TOKEN_SECRET = "python-test-secret-of-at-least-32-bytes"
READY_TIMEOUT = 20.0
RECV_TIMEOUT = 5.0

# Channels without a namespace keep history and presence; "plain:" ones
# have neither. Anyone may subscribe to both.
DEFAULT_CHANNELS = {
    "without_namespace": {
        "allow_subscribe_for_client": True,
        "presence": True,
        "history_size": 100,
        "history_ttl": "300s",
    },
    "namespaces": [{"name": "plain", "allow_subscribe_for_client": True}],
}


@pytest.fixture(scope="session")
def testserver_binary():
    if os.environ.get("HERALD_BIN"):
        return pathlib.Path(os.environ["HERALD_BIN"])
    subprocess.run(["go", "build", "-o", str(BINARY), "./cmd/herald"], cwd=REPO, check=True)
    return BINARY


# The machine-wide PostgreSQL test lock, as the Go tests take it
# (internal/test/testenv.LockPostgres): an exclusive flock(2) on this file in
# the temporary directory. Some Go tests restart the test PostgreSQL server or
# terminate its backends, and scripts/test.sh can run them while these tests
# run (HERALD_TEST_LANE=1).
POSTGRES_LOCK_FILE = os.path.join(tempfile.gettempdir(), "herald-test-postgres.lock")
POSTGRES_LOCK_WAIT = 300  # seconds; a Go test holds the lock for one test


@pytest.fixture(scope="module")
def postgres_lock(request):
    """Holds the PostgreSQL test lock for the module that asks for it, from
    before its first node starts until its last fixture is torn down."""
    fd = os.open(POSTGRES_LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        deadline = time.monotonic() + POSTGRES_LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    with open(POSTGRES_LOCK_FILE, errors="replace") as f:
                        holder = f.read().strip()
                    pytest.fail(f"PostgreSQL test lock {POSTGRES_LOCK_FILE}: still held after "
                                f"{POSTGRES_LOCK_WAIT} s by {holder or 'a holder that wrote no name'}")
                time.sleep(0.025)
        # Only the holder writes, so the file names the current holder: the
        # Go tests' format, "pid<TAB>test".
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\t{request.module.__name__}\n".encode(), 0)
        yield
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the descriptor lets go of the lock


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(addr, proc):
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"http://{addr}/readyz", timeout=1) as r:
                if r.status == 200:
                    return True
        except OSError:
            time.sleep(0.05)
    return False


class WSClient:
    """A connected client of the JSON protocol over a real WebSocket."""

    def __init__(self, url, token, stack):
        # connect() is a context manager; the node's exit stack closes it.
        self.conn = stack.enter_context(connect(url, open_timeout=RECV_TIMEOUT))
        self.next_id = 1
        reply = self.command("connect", {"token": token})
        self.client_id = reply["connect"]["client"]

    def command(self, name, body):
        """Sends a command and returns its reply (pushes before it fail)."""
        cid = self.next_id
        self.next_id += 1
        self.conn.send(json.dumps({"id": cid, name: body}))
        msg = self.recv()
        assert msg.get("id") == cid, f"want the reply to {name}, got {msg}"
        return msg

    def subscribe(self, channel):
        reply = self.command("subscribe", {"channel": channel})
        assert "subscribe" in reply, reply

    def recv(self):
        """Returns the next message, failing after RECV_TIMEOUT."""
        frame = self.conn.recv(timeout=RECV_TIMEOUT)
        lines = frame.split("\n")
        assert len(lines) == 1, f"want one message per frame, got {frame!r}"
        return json.loads(lines[0])

    def expect_close(self):
        """Waits for the server to close; returns (code, reason)."""
        deadline = time.monotonic() + RECV_TIMEOUT
        while time.monotonic() < deadline:
            try:
                self.conn.recv(timeout=deadline - time.monotonic())
            except ConnectionClosed as closed:
                return closed.rcvd.code, closed.rcvd.reason
        pytest.fail("connection not closed in time")

    def expect_open(self):
        """Proves the connection is open and has nothing queued."""
        reply = self.command("rpc", {"method": "probe"})
        assert "error" in reply or "rpc" in reply



class Node:
    def __init__(self, proc, log, addr, key):
        self.proc = proc
        self.log = log
        self.api_url = f"http://{addr}/api"
        self.ws_url = f"ws://{addr}/connection/websocket"
        self.api_key = key
        self._clients = contextlib.ExitStack()

    def token(self, user, info=None):
        claims = {"sub": user}
        if info is not None:
            claims["info"] = info
        return jwt.encode(claims, TOKEN_SECRET, algorithm="HS256")

    def ws(self, user, info=None):
        return WSClient(self.ws_url, self.token(user, info), self._clients)

    def stop(self):
        self._clients.close()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail("herald did not stop on SIGTERM")
        finally:
            self.log.close()
        assert self.proc.returncode == 0, f"herald exited with {self.proc.returncode}"


def _yaml(value):
    # JSON is valid YAML, and spares a YAML dependency.
    return json.dumps(value)


@pytest.fixture
def start_node(testserver_binary, tmp_path):
    """Starts nodes with the given API settings; stops them after the test."""
    nodes = []

    def start(api=None, channels=None, client=None):
        api = {"key": API_KEY, **(api or {})}
        # A test's client section adds to the HMAC key every test signs with.
        client = dict(client or {})
        client["token"] = {"hmac_secret_key": TOKEN_SECRET, **client.get("token", {})}
        config = {
            "http_api": api,
            "client": client,
            "name": "python-node",
            "channel": channels or DEFAULT_CHANNELS,
        }
        path = tmp_path / f"node{len(nodes)}.yaml"
        path.write_text(_yaml(config))
        log = open(tmp_path / f"node{len(nodes)}.log", "w")
        addr = f"127.0.0.1:{_free_port()}"
        proc = subprocess.Popen(
            [str(testserver_binary), "serve", "--config", str(path), "--address", addr],
            stdout=log,
            stderr=log,
        )
        if not _wait_ready(addr, proc):
            proc.kill()
            proc.wait()
            log.close()
            pytest.fail(f"herald did not start: see {tmp_path}")
        line = "READY " + addr
        node = Node(proc, log, line.split()[1], api.get("key", ""))
        nodes.append(node)
        return node

    yield start
    for n in nodes:
        n.stop()


@pytest.fixture
def node(start_node):
    return start_node()
