"""centrifuge-python through Herald's gRPC proxy, with no token anywhere.

The backend (grpc_proxy_backend.py) is a Python gRPC server whose code
grpcio-tools generates at test time from the repository's proxy.proto
(Centrifugo's interface, with its names and numbers), as a team's backend
generated from Centrifugo's file would be. Herald (the real `herald serve`) proxies every event to it
over grpc://; the tests check what clients get when the backend answers,
refuses, rewrites, hangs and is killed.
"""

import asyncio
import contextlib
import json
import os
import pathlib
import select
import signal
import subprocess
import sys

import pytest

from centrifuge import Client, ReplyError

from conftest import _free_port, _wait_ready
from sdkevents import Events, check_subscribe_and_publish, connect, next_event, subscribe

REPO = pathlib.Path(__file__).resolve().parents[2]
PROTO_DIR = REPO / "proxy" / "proxyproto"
BACKEND = pathlib.Path(__file__).resolve().parent / "grpc_proxy_backend.py"
# The codes grpc_proxy_backend.py answers with.
RPC_ERROR = 1500
NO_USER = 4501
# What Herald answers when the backend gives no usable answer.
INTERNAL = 100
WAIT = 10.0
CALL_TIMEOUT = 1.0
BACKEND_KEY = "py-grpc-secret"
REQUIRE = bool(os.environ.get("HERALD_TEST_REQUIRE_SERVICES"))


def _skip_or_fail(reason):
    if REQUIRE:
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The Python modules generated from proxy.proto; their directory."""
    try:
        import grpc_tools  # noqa: F401
    except ImportError:
        _skip_or_fail("grpcio-tools is not installed (tests/python/requirements.txt)")
    out = tmp_path_factory.mktemp("proxyproto")
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_DIR}", f"--python_out={out}",
         f"--grpc_python_out={out}", "proxy.proto"],
        check=True,
    )
    return out


class Backend:
    """The backend process on a fixed port, so that it can be restarted."""

    def __init__(self, generated):
        self.generated = generated
        self.port = _free_port()
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, str(BACKEND), str(self.generated), str(self.port)], stdout=subprocess.PIPE, text=True
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], WAIT)
        if not ready or self.proc.stdout.readline().strip() != "ready":
            self.kill()
            pytest.fail("the gRPC proxy backend did not start")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=WAIT)
        if self.proc:
            self.proc.stdout.close()

    @property
    def endpoint(self):
        return f"grpc://127.0.0.1:{self.port}"


@contextlib.contextmanager
def _backend(generated):
    b = Backend(generated)
    b.start()
    try:
        yield b
    finally:
        b.kill()


def _config(endpoint):
    events = ["connect", "refresh", "subscribe", "publish", "sub_refresh", "rpc"]
    return {
        "proxies": [
            {
                "name": e,
                "endpoint": endpoint,
                "timeout": f"{CALL_TIMEOUT}s",
                "http_headers": ["X-User"],
                "grpc": {"credentials_key": "x-backend-key", "credentials_value": BACKEND_KEY},
            }
            for e in events
        ],
        "client": {"proxy": {"connect": "connect", "refresh": "refresh"}},
        "rpc": {"proxy": "rpc"},
        "channel": {
            "namespaces": [
                {"name": "px", "subscribe_proxy": "subscribe", "publish_proxy": "publish", "sub_refresh_proxy": "sub_refresh"},
                {"name": "stream", "subscribe_stream_proxy": "subscribe"},
                {"name": "bidi", "subscribe_stream_proxy": "subscribe", "subscribe_stream_proxy_bidirectional": True},
            ]
        },
    }


@contextlib.contextmanager
def _node(binary, config, tmp):
    """A herald node with config; its WebSocket URL."""
    path = tmp / "herald.yaml"
    path.write_text(json.dumps(config))
    res = subprocess.run([str(binary), "config", "check", str(path)], capture_output=True, text=True)
    assert res.returncode == 0, f"herald config check refused the configuration: {res.stdout}{res.stderr}"
    addr = f"127.0.0.1:{_free_port()}"
    log = open(tmp / "herald.log", "w")
    proc = subprocess.Popen([str(binary), "serve", "--config", str(path), "--address", addr], stdout=log, stderr=log)
    try:
        if not _wait_ready(addr, proc):
            pytest.fail(f"herald did not start: see {tmp / 'herald.log'}")
        yield f"ws://{addr}/connection/websocket"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def node(testserver_binary, generated, tmp_path_factory):
    with _backend(generated) as b, _node(testserver_binary, _config(b.endpoint), tmp_path_factory.mktemp("grpcproxy")) as url:
        yield url


def test_connect_without_token_through_the_grpc_backend(node):
    async def run():
        # The user from the connect command's data.
        bob, ctx = await connect(node, data={"user": "py-bob"})
        try:
            assert ctx.data == {"welcome": "py-bob", "client": ctx.client, "transport": "websocket"}
        finally:
            await bob.disconnect()
        # The user from a header of the upgrade request, forwarded as metadata.
        alice, ctx = await connect(node, headers={"X-User": "py-alice"})
        try:
            assert ctx.data["welcome"] == "py-alice"
        finally:
            await alice.disconnect()
        # No user: the backend's disconnect ends the client.
        events = Events()
        nobody = Client(node, events=events, proxy=None)
        await nobody.connect()
        gone = await next_event(events.disconnected)
        assert gone.code == NO_USER, gone

    asyncio.run(run())


def test_subscribe_publish_rpc_through_the_grpc_backend(node):
    async def run():
        alice, _ = await connect(node, data={"user": "py-alice"})
        bob, _ = await connect(node, data={"user": "py-bob"})
        try:
            await check_subscribe_and_publish(alice, bob)

            # RPC: the backend got the data, the user and the credentials
            # metadata; its error code reaches the client.
            res = await alice.rpc("echo", {"n": 2})
            assert res.data == {"data": {"n": 2}, "user": "py-alice", "secret": BACKEND_KEY}
            with pytest.raises(ReplyError) as err:
                await alice.rpc("error", {})
            assert err.value.code == RPC_ERROR
        finally:
            await alice.disconnect()
            await bob.disconnect()

    asyncio.run(run())


def test_protobuf_client_binary_payloads_through_the_grpc_backend(node):
    """A Protobuf client's payloads that are not JSON go to the backend as
    bytes (encoding "binary"), and the backend's bytes come back as they
    are."""

    async def run():
        client, ctx = await connect(node, data=b'{"user":"py-proto"}', use_protobuf=True)
        try:
            assert json.loads(ctx.data) == {"welcome": "py-proto", "client": ctx.client, "transport": "websocket"}
            res = await client.rpc("reverse", b"\x00\x01\xfe")
            assert res.data == b"binary:\xfe\x01\x00"
        finally:
            await client.disconnect()

    asyncio.run(run())


def test_subscribe_stream_feeds_one_subscription(node):
    """A subscription in a namespace with a subscribe-stream proxy gets the
    backend's stream: its initial data, then the publications it streams
    to this subscriber."""

    async def run():
        alice, _ = await connect(node, data={"user": "py-alice"})
        try:
            _, events, ctx = await subscribe(alice, "stream:py-feed")
            assert ctx.data == {"stream": "stream:py-feed", "user": "py-alice"}
            got = [(await next_event(events.publications)).pub.data for _ in range(3)]
            assert got == [{"n": 1}, {"n": 2}, {"n": 3}]
        finally:
            await alice.disconnect()

    asyncio.run(run())


def test_bidirectional_stream_takes_the_subscribers_publications(node):
    """In a namespace with bidirectional streams, what the subscriber
    publishes goes to its stream, and the backend's answer comes back on
    the subscription."""

    async def run():
        alice, _ = await connect(node, data={"user": "py-alice"})
        try:
            _, events, _ = await subscribe(alice, "bidi:py-chat")
            await alice.publish("bidi:py-chat", {"text": "hi"})
            got = (await next_event(events.publications)).pub.data
            assert got == {"echo": {"text": "hi"}, "user": "py-alice"}
        finally:
            await alice.disconnect()

    asyncio.run(run())


def test_hanging_grpc_backend(node):
    """A call the backend never answers ends with error 100 after the
    proxy's timeout; another client is served meanwhile."""

    async def run():
        alice, _ = await connect(node, data={"user": "py-alice"})
        bob, _ = await connect(node, data={"user": "py-bob"})
        try:
            loop = asyncio.get_running_loop()
            start = loop.time()
            hanging = asyncio.ensure_future(alice.rpc("hang", {}))
            res = await bob.rpc("echo", {"quick": True})
            assert res.data["data"] == {"quick": True}
            assert not hanging.done(), "the hanging call ended before the other client's"
            with pytest.raises(ReplyError) as err:
                await hanging
            assert err.value.code == INTERNAL
            elapsed = loop.time() - start
            assert CALL_TIMEOUT * 0.9 <= elapsed < CALL_TIMEOUT + 3, elapsed
            # Alice's connection still works.
            assert (await alice.rpc("echo", {})).data["user"] == "py-alice"
        finally:
            await alice.disconnect()
            await bob.disconnect()

    asyncio.run(run())


def test_killed_grpc_backend(testserver_binary, generated, tmp_path):
    """With the backend killed, calls fail with error 100 and no client is
    authenticated; once it is back, clients are served again."""

    async def run(url, backend):
        alice, _ = await connect(url, data={"user": "py-alice"})
        try:
            backend.kill()
            with pytest.raises(ReplyError) as err:
                await alice.rpc("echo", {})
            assert err.value.code == INTERNAL
            assert alice.state.value == "connected"

            # A new client is not authenticated while the backend is down
            # (its connect gets error 100, temporary, so it retries).
            events = Events()
            bob = Client(url, events=events, proxy=None, data={"user": "py-bob"}, max_reconnect_delay=0.5)
            await bob.connect()
            with pytest.raises(asyncio.TimeoutError):
                await next_event(events.connected, timeout=1.0)

            # Back: bob's retries get through; alice's calls are answered.
            backend.start()
            await next_event(events.connected, timeout=WAIT + 5)
            for _ in range(50):
                try:
                    res = await alice.rpc("echo", {"again": True})
                    break
                except ReplyError as e:
                    assert e.code == INTERNAL
                    await asyncio.sleep(0.2)  # the channel reconnects with backoff
            assert res.data["data"] == {"again": True}
            await bob.disconnect()
        finally:
            await alice.disconnect()

    with _backend(generated) as b, _node(testserver_binary, _config(b.endpoint), tmp_path) as url:
        asyncio.run(run(url, b))
