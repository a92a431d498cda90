"""centrifuge-python through Herald's proxy, with no token anywhere.

The backend is the express application of the JS tests
(tests/js/lib/proxybackend.mjs, written to Centrifugo's proxy
documentation), run standalone. Two herald nodes share a PostgreSQL
schema: a client on node A connects, subscribes, publishes and calls RPC,
and a client on node B receives what the backend allowed or rewrote.
"""

import asyncio
import json
import os
import pathlib
import secrets
import select
import shutil
import subprocess

import pytest

from centrifuge import Client, ReplyError

from conftest import _free_port, _wait_ready
from sdkevents import Events, check_subscribe_and_publish, connect, next_event

REPO = pathlib.Path(__file__).resolve().parents[2]
BACKEND = REPO / "tests" / "js" / "lib" / "proxybackend.mjs"
EVENTS = ["connect", "refresh", "subscribe", "publish", "sub_refresh", "rpc"]
# The error codes lib/proxybackend.mjs answers with (CODES there).
RPC_ERROR = 1500
WAIT = 10.0
REQUIRE = bool(os.environ.get("HERALD_TEST_REQUIRE_SERVICES"))


def _proxy_config(endpoint):
    return {
        "proxies": [
            {"name": e, "endpoint": endpoint(e), "timeout": "2s", "http_headers": ["X-User"]}
            for e in EVENTS
        ],
        "client": {"proxy": {"connect": "connect", "refresh": "refresh"}},
        "rpc": {"proxy": "rpc"},
        "channel": {
            "namespaces": [
                {
                    "name": "px",
                    "subscribe_proxy": "subscribe",
                    "publish_proxy": "publish",
                    "sub_refresh_proxy": "sub_refresh",
                }
            ]
        },
    }


def _skip_or_fail(reason):
    if REQUIRE:
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def backend():
    """The Node backend on a free loopback port; its base URL."""
    node = shutil.which("node")
    if node is None or not (REPO / "tests" / "js" / "node_modules" / "express").is_dir():
        _skip_or_fail("the proxy backend needs node and `npm ci` in tests/js")
    proc = subprocess.Popen([node, str(BACKEND)], stdout=subprocess.PIPE, text=True)
    try:
        # The first line is {"port": N} once it listens.
        ready, _, _ = select.select([proc.stdout], [], [], WAIT)
        line = proc.stdout.readline() if ready else ""
        if not line:
            pytest.fail("the proxy backend did not start")
        yield f"http://127.0.0.1:{json.loads(line)['port']}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def cluster(testserver_binary, backend, tmp_path_factory, postgres_lock):
    """Two herald nodes on one PostgreSQL schema, proxying to the backend."""
    dsn = os.environ.get("HERALD_TEST_POSTGRES_DSN")
    if not dsn:
        _skip_or_fail('HERALD_TEST_POSTGRES_DSN is not set: eval "$(scripts/services.sh env)"')
    tmp = tmp_path_factory.mktemp("proxy")
    config = _proxy_config(lambda e: f"{backend}/centrifugo/{e}")
    check = tmp / "check.yaml"
    check.write_text(json.dumps(config))
    res = subprocess.run(
        [str(testserver_binary), "config", "check", str(check)], capture_output=True, text=True
    )
    if res.returncode != 0:
        out = (res.stdout + res.stderr).strip()
        if "unknown key" in out:
            pytest.skip(f"this herald has no proxy configuration yet: {out}")
        pytest.fail(f"herald config check refused the proxy configuration: {out}")

    schema = "herald_proxy_py_" + secrets.token_hex(6)
    nodes = []
    try:
        # One after the other: the first creates the schema.
        for name in ("proxy-py-a", "proxy-py-b"):
            path = tmp / f"{name}.yaml"
            full = {
                **config,
                "name": name,
                "engine": {"type": "postgres", "postgres": {"dsn": dsn, "schema": schema}},
            }
            path.write_text(json.dumps(full))
            log = open(tmp / f"{name}.log", "w")
            addr = f"127.0.0.1:{_free_port()}"
            proc = subprocess.Popen(
                [str(testserver_binary), "serve", "--config", str(path), "--address", addr],
                stdout=log,
                stderr=log,
            )
            nodes.append((proc, log, f"ws://{addr}/connection/websocket"))
            if not _wait_ready(addr, proc):
                pytest.fail(f"herald {name} did not start: see {tmp}")
        yield [url for _, _, url in nodes]
    finally:
        for proc, log, _ in nodes:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
        if shutil.which("psql"):
            subprocess.run(
                ["psql", dsn, "-q", "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE"],
                capture_output=True,
                timeout=30,
            )


def test_connect_without_token_through_the_backend(cluster):
    async def run():
        # The user from the connect command's data.
        bob, ctx = await connect(cluster[1], data={"user": "py-bob"})
        try:
            assert ctx.data == {"welcome": "py-bob", "client": ctx.client, "transport": "websocket"}
        finally:
            await bob.disconnect()
        # No user: the backend's disconnect ends the client.
        events = Events()
        nobody = Client(cluster[0], events=events, proxy=None)
        await nobody.connect()
        gone = await next_event(events.disconnected)
        assert gone.code == 4501, gone

    asyncio.run(run())


def test_connect_with_the_user_in_a_header(cluster):
    async def run():
        # The user from a header of the WebSocket upgrade request.
        alice, ctx = await connect(cluster[0], headers={"X-User": "py-alice"})
        try:
            assert ctx.data["welcome"] == "py-alice"
        finally:
            await alice.disconnect()

    asyncio.run(run())


def test_subscribe_publish_rpc_across_nodes(cluster):
    async def run():
        alice, _ = await connect(cluster[0], data={"user": "py-alice"})
        bob, _ = await connect(cluster[1], data={"user": "py-bob"})
        try:
            # Subscribe and publish on node A, received on node B.
            await check_subscribe_and_publish(alice, bob)

            # RPC: echo, and the backend's error code.
            res = await alice.rpc("echo", {"n": 2})
            assert res.data["data"] == {"n": 2}
            assert res.data["user"] == "py-alice"
            with pytest.raises(ReplyError) as err:
                await alice.rpc("error", {})
            assert err.value.code == RPC_ERROR
        finally:
            await alice.disconnect()
            await bob.disconnect()

    asyncio.run(run())
