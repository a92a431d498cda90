"""Herald's gRPC server API through a client generated from api.proto with
grpcio-tools, as a backend on Centrifugo would generate it, on two nodes
that share a PostgreSQL schema. Effects are checked on real WebSocket
connections."""

import importlib
import json
import os
import pathlib
import secrets
import shutil
import subprocess
import sys
import time

import grpc
import pytest
from grpc_tools import protoc

from conftest import API_KEY, TOKEN_SECRET, Node, _free_port, _wait_ready

REPO = pathlib.Path(__file__).resolve().parents[2]
PROTO = REPO / "api" / "grpcapi" / "apiproto" / "api.proto"
GRPC_KEY = "python-grpc-test-key"
MAX_MESSAGE = 64 * 1024
TIMEOUT = 10.0
REQUIRE = bool(os.environ.get("HERALD_TEST_REQUIRE_SERVICES"))
NOT_AVAILABLE = 108


def _skip_or_fail(msg):
    if REQUIRE:
        pytest.fail(msg)
    pytest.skip(msg)


@pytest.fixture(scope="module")
def api_pb(tmp_path_factory):
    """api_pb2 and api_pb2_grpc, generated from api.proto into a temporary
    directory at test time."""
    out = tmp_path_factory.mktemp("apiproto")
    rc = protoc.main(
        ["grpc_tools.protoc", f"-I{PROTO.parent}", f"--python_out={out}", f"--grpc_python_out={out}", str(PROTO)]
    )
    assert rc == 0, f"grpc_tools.protoc failed with {rc}"
    sys.path.insert(0, str(out))
    try:
        pb2 = importlib.import_module("api_pb2")
        pb2_grpc = importlib.import_module("api_pb2_grpc")
    finally:
        sys.path.remove(str(out))
    return pb2, pb2_grpc


@pytest.fixture(scope="module")
def cluster(testserver_binary, tmp_path_factory, postgres_lock):
    """Two herald nodes on one PostgreSQL schema, each with its gRPC API;
    yields [(node, grpc_address)]."""
    dsn = os.environ.get("HERALD_TEST_POSTGRES_DSN")
    if not dsn:
        _skip_or_fail('HERALD_TEST_POSTGRES_DSN is not set: eval "$(scripts/services.sh env)"')
    tmp = tmp_path_factory.mktemp("grpcapi")
    schema = "herald_grpc_py_" + secrets.token_hex(6)
    nodes = []
    try:
        # One after the other: the first creates the schema.
        for name in ("grpc-py-a", "grpc-py-b"):
            grpc_port = _free_port()
            config = {
                "name": name,
                "http_api": {"key": API_KEY},
                "grpc_api": {
                    "enabled": True,
                    "address": "127.0.0.1",
                    "port": grpc_port,
                    "key": GRPC_KEY,
                    "max_receive_message_size": MAX_MESSAGE,
                },
                "client": {"token": {"hmac_secret_key": TOKEN_SECRET}},
                "channel": {
                    "without_namespace": {
                        "allow_subscribe_for_client": True,
                        "presence": True,
                        "history_size": 100,
                        "history_ttl": "300s",
                    },
                    "namespaces": [{"name": "board", "subscription_type": "map", "map": {"mode": "persistent"}}],
                },
                "engine": {"type": "postgres", "postgres": {"dsn": dsn, "schema": schema}},
            }
            path = tmp / f"{name}.yaml"
            path.write_text(json.dumps(config))
            log = open(tmp / f"{name}.log", "w")
            addr = f"127.0.0.1:{_free_port()}"
            proc = subprocess.Popen(
                [str(testserver_binary), "serve", "--config", str(path), "--address", addr],
                stdout=log,
                stderr=log,
            )
            nodes.append((Node(proc, log, addr, API_KEY), f"127.0.0.1:{grpc_port}"))
            if not _wait_ready(addr, proc):
                pytest.fail(f"herald {name} did not start: see {tmp}")
        yield nodes
    finally:
        for node, _ in nodes:
            node.stop()
        if shutil.which("psql"):
            subprocess.run(
                ["psql", dsn, "-q", "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE"],
                capture_output=True,
                timeout=30,
            )


@pytest.fixture
def stubs(cluster, api_pb):
    """A CentrifugoApiStub per node, with the API key as call metadata."""
    _, pb2_grpc = api_pb
    channels = [grpc.insecure_channel(addr) for _, addr in cluster]
    yield [pb2_grpc.CentrifugoApiStub(ch) for ch in channels]
    for ch in channels:
        ch.close()


AUTH = (("authorization", "apikey " + GRPC_KEY),)


def call(method, request):
    """Calls with the key; fails on a Centrifugo error in the response."""
    resp = method(request, metadata=AUTH, timeout=TIMEOUT)
    assert not resp.HasField("error"), f"{request.__class__.__name__}: {resp.error}"
    return resp.result


def test_publish_broadcast_presence_history_disconnect(cluster, stubs, api_pb):
    pb2, _ = api_pb
    (node_a, _), (node_b, _) = cluster
    grpc_a, grpc_b = stubs

    # Both nodes appear in the info of either.
    info = call(grpc_a.Info, pb2.InfoRequest())
    assert sorted(n.name for n in info.nodes) == ["grpc-py-a", "grpc-py-b"]

    ws = node_b.ws("bob")
    ws.subscribe("chat")

    res = call(grpc_a.Publish, pb2.PublishRequest(channel="chat", data=b'{"text":"hi"}', tags={"k": "v"}))
    assert res.offset == 1 and res.epoch
    assert ws.recv() == {"push": {"channel": "chat", "pub": {"data": {"text": "hi"}, "offset": 1, "tags": {"k": "v"}}}}

    res = call(grpc_a.Broadcast, pb2.BroadcastRequest(channels=["chat", "other"], data=b"[2]"))
    assert [r.HasField("error") for r in res.responses] == [False, False]
    assert res.responses[0].result.offset == 2
    assert ws.recv() == {"push": {"channel": "chat", "pub": {"data": [2], "offset": 2}}}

    # Presence through node A lists bob, connected to node B.
    presence = call(grpc_a.Presence, pb2.PresenceRequest(channel="chat")).presence
    assert {k: v.user for k, v in presence.items()} == {ws.client_id: "bob"}
    stats = call(grpc_a.PresenceStats, pb2.PresenceStatsRequest(channel="chat"))
    assert (stats.num_clients, stats.num_users) == (1, 1)

    history = call(grpc_b.History, pb2.HistoryRequest(channel="chat", limit=-1))
    assert [(p.data, p.offset) for p in history.publications] == [(b'{"text":"hi"}', 1), (b"[2]", 2)]
    assert history.offset == 2

    # A Centrifugo error comes in the response, not as a gRPC error.
    resp = grpc_a.Publish(pb2.PublishRequest(channel="chat"), metadata=AUTH, timeout=TIMEOUT)
    assert resp.error.code == 107 and "data required" in resp.error.message

    call(grpc_a.Disconnect, pb2.DisconnectRequest(user="bob", disconnect=pb2.Disconnect(code=4000, reason="bye")))
    assert ws.expect_close() == (4000, "bye")


def test_batch_and_unavailable_methods(stubs, api_pb):
    pb2, _ = api_pb
    grpc_a, _ = stubs
    res = grpc_a.Batch(
        pb2.BatchRequest(
            commands=[
                pb2.Command(publish=pb2.PublishRequest(channel="batch", data=b"1")),
                pb2.Command(history=pb2.HistoryRequest(channel="batch", limit=1)),
                pb2.Command(device_list=pb2.DeviceListRequest()),
            ]
        ),
        metadata=AUTH,
        timeout=TIMEOUT,
    )
    publish, history, status = res.replies
    assert publish.publish.offset == 1
    assert [p.data for p in history.history.publications] == [b"1"]
    assert status.error.code == NOT_AVAILABLE

    resp = grpc_a.DeviceList(pb2.DeviceListRequest(), metadata=AUTH, timeout=TIMEOUT)
    assert resp.error.code == NOT_AVAILABLE


def test_map_methods(stubs, api_pb):
    """The map rpcs of Centrifugo 6.9's api.proto: a change made through
    node A is read through node B, and a batch runs the map commands."""
    pb2, _ = api_pb
    grpc_a, grpc_b = stubs
    channel = "board:" + secrets.token_hex(4)
    first = call(grpc_a.MapPublish, pb2.MapPublishRequest(channel=channel, key="a", data=b'{"v":1}'))
    assert first.offset == 1 and first.epoch and not first.suppressed
    call(grpc_a.MapPublish, pb2.MapPublishRequest(channel=channel, key="b", data=b'{"v":2}'))
    removed = call(grpc_a.MapRemove, pb2.MapRemoveRequest(channel=channel, key="a"))
    assert (removed.offset, removed.epoch) == (3, first.epoch)

    assert call(grpc_b.MapStats, pb2.MapStatsRequest(channel=channel)).num_keys == 1
    state = call(grpc_b.MapReadState, pb2.MapReadStateRequest(channel=channel))
    assert [(e.key, e.data, e.offset) for e in state.entries] == [("b", b'{"v":2}', 2)]
    assert (state.offset, state.epoch, state.cursor) == (3, first.epoch, "")
    stream = call(
        grpc_b.MapReadStream,
        pb2.MapReadStreamRequest(channel=channel, since_offset=1, since_epoch=first.epoch, limit=-1),
    )
    assert [(e.key, e.removed) for e in stream.entries] == [("b", False), ("a", True)]

    resp = grpc_b.MapReadStream(
        pb2.MapReadStreamRequest(channel=channel, since_offset=1, since_epoch="other"), metadata=AUTH, timeout=TIMEOUT
    )
    assert resp.error.code == 112

    res = grpc_a.Batch(
        pb2.BatchRequest(
            commands=[
                pb2.Command(map_publish=pb2.MapPublishRequest(channel=channel, key="c", data=b"3")),
                pb2.Command(map_read_state=pb2.MapReadStateRequest(channel=channel)),
                pb2.Command(map_clear=pb2.MapClearRequest(channel=channel)),
                pb2.Command(map_stats=pb2.MapStatsRequest(channel=channel)),
            ]
        ),
        metadata=AUTH,
        timeout=TIMEOUT,
    )
    published, read, cleared, stats = res.replies
    assert published.map_publish.offset == 4
    assert [e.key for e in read.map_read_state.entries] == ["b", "c"]
    assert cleared.HasField("map_clear") and not cleared.HasField("error")
    assert stats.HasField("map_stats") and stats.map_stats.num_keys == 0


def test_api_key_refused(stubs, api_pb):
    pb2, _ = api_pb
    grpc_a, _ = stubs
    for metadata in [(), (("authorization", "apikey wrong"),)]:
        with pytest.raises(grpc.RpcError) as err:
            grpc_a.Publish(pb2.PublishRequest(channel="chat", data=b"{}"), metadata=metadata, timeout=TIMEOUT)
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_oversized_message_refused(stubs, api_pb):
    pb2, _ = api_pb
    grpc_a, _ = stubs
    big = b'"' + b"x" * MAX_MESSAGE + b'"'
    with pytest.raises(grpc.RpcError) as err:
        grpc_a.Publish(pb2.PublishRequest(channel="big", data=big), metadata=AUTH, timeout=TIMEOUT)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    history = call(grpc_a.History, pb2.HistoryRequest(channel="big"))
    assert history.offset == 0, "the refused publication reached the channel"


@pytest.fixture
def tls_node(testserver_binary, tmp_path):
    """One node whose gRPC API serves TLS with a self-signed certificate
    for 127.0.0.1 made by openssl; yields (grpc address, certificate PEM)."""
    if not shutil.which("openssl"):
        _skip_or_fail("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=30,
    )
    grpc_port = _free_port()
    config = {
        "name": "grpc-py-tls",
        "grpc_api": {
            "enabled": True, "address": "127.0.0.1", "port": grpc_port, "key": GRPC_KEY,
            "tls": {"cert_file": str(cert), "key_file": str(key)},
        },
        "client": {"token": {"hmac_secret_key": TOKEN_SECRET}},
    }
    path = tmp_path / "tls.yaml"
    path.write_text(json.dumps(config))
    log = open(tmp_path / "tls.log", "w")
    addr = f"127.0.0.1:{_free_port()}"
    proc = subprocess.Popen(
        [str(testserver_binary), "serve", "--config", str(path), "--address", addr], stdout=log, stderr=log
    )
    node = Node(proc, log, addr, "")
    try:
        if not _wait_ready(addr, proc):
            pytest.fail(f"herald did not start: see {tmp_path}")
        yield f"127.0.0.1:{grpc_port}", cert.read_bytes()
    finally:
        node.stop()


def test_tls(tls_node, api_pb):
    pb2, pb2_grpc = api_pb
    addr, cert = tls_node
    creds = grpc.ssl_channel_credentials(root_certificates=cert)
    with grpc.secure_channel(addr, creds) as ch:
        info = call(pb2_grpc.CentrifugoApiStub(ch).Info, pb2.InfoRequest())
        assert [n.name for n in info.nodes] == ["grpc-py-tls"]
    with grpc.insecure_channel(addr) as ch:
        with pytest.raises(grpc.RpcError) as err:
            pb2_grpc.CentrifugoApiStub(ch).Info(pb2.InfoRequest(), metadata=AUTH, timeout=TIMEOUT)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_block_and_revoke(stubs, api_pb):
    """Centrifugo PRO's blocking and revocation rpcs, from a client generated
    from Centrifugo's api.proto: each answers without an error on either
    node, and a missing user is Centrifugo's bad request."""
    pb2, _ = api_pb
    grpc_a, grpc_b = stubs
    assert not grpc_a.BlockUser(pb2.BlockUserRequest(user="mallory"), metadata=AUTH, timeout=TIMEOUT).HasField("error")
    assert not grpc_b.UnblockUser(pb2.UnblockUserRequest(user="mallory"), metadata=AUTH, timeout=TIMEOUT).HasField("error")
    assert not grpc_a.RevokeToken(pb2.RevokeTokenRequest(uid="jti-1"), metadata=AUTH, timeout=TIMEOUT).HasField("error")
    resp = grpc_b.InvalidateUserTokens(
        pb2.InvalidateUserTokensRequest(user="mallory", channel="chat"), metadata=AUTH, timeout=TIMEOUT
    )
    assert not resp.HasField("error")
    resp = grpc_a.BlockUser(pb2.BlockUserRequest(), metadata=AUTH, timeout=TIMEOUT)
    assert resp.error.code == 107


def test_user_status(stubs, api_pb):
    """update_user_status through one node is read through the other (the
    status is kept in PostgreSQL), in the order asked; delete forgets it."""
    pb2, _ = api_pb
    grpc_a, grpc_b = stubs
    before = int(time.time())
    resp = grpc_a.UpdateUserStatus(pb2.UpdateUserStatusRequest(users=["ann", "bob"], state="busy"), metadata=AUTH, timeout=TIMEOUT)
    assert not resp.HasField("error")
    resp = grpc_b.GetUserStatus(pb2.GetUserStatusRequest(users=["bob", "nobody", "ann"]), metadata=AUTH, timeout=TIMEOUT)
    assert not resp.HasField("error")
    got = [(s.user, s.active >= before, s.state) for s in resp.result.statuses]
    assert got == [("bob", True, "busy"), ("nobody", False, ""), ("ann", True, "busy")]
    grpc_b.DeleteUserStatus(pb2.DeleteUserStatusRequest(users=["ann"]), metadata=AUTH, timeout=TIMEOUT)
    resp = grpc_a.GetUserStatus(pb2.GetUserStatusRequest(users=["ann"]), metadata=AUTH, timeout=TIMEOUT)
    assert resp.result.statuses[0].active == 0
