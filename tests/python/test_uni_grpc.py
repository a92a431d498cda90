"""A uni_grpc client generated with grpcio-tools from Centrifugo's unistream.proto.

The client code is generated at test time from the repository's copy of
unistream.proto, as a team's consumer generated from Centrifugo's file
would be. It connects to a real `herald serve` with uni_grpc on, and
receives the connect push, the publications the HTTP API makes, and the
disconnect push when the server disconnects the user.
"""

import json
import os
import pathlib
import subprocess
import sys
import urllib.request

import jwt
import pytest

from conftest import API_KEY, TOKEN_SECRET, _free_port, _wait_ready

REPO = pathlib.Path(__file__).resolve().parents[2]
PROTO_DIR = REPO / "transport" / "unigrpc" / "unistream"
WAIT = 10.0
REQUIRE = bool(os.environ.get("HERALD_TEST_REQUIRE_SERVICES"))


@pytest.fixture(scope="module")
def unistream(tmp_path_factory):
    """The modules generated from unistream.proto: (pb2, pb2_grpc)."""
    try:
        import grpc_tools  # noqa: F401
    except ImportError:
        if REQUIRE:
            pytest.fail("grpcio-tools is not installed (tests/python/requirements.txt)")
        pytest.skip("grpcio-tools is not installed (tests/python/requirements.txt)")
    out = tmp_path_factory.mktemp("unistream")
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_DIR}", f"--python_out={out}",
         f"--grpc_python_out={out}", "unistream.proto"],
        check=True,
    )
    sys.path.insert(0, str(out))
    try:
        import unistream_pb2
        import unistream_pb2_grpc
    finally:
        sys.path.remove(str(out))
    return unistream_pb2, unistream_pb2_grpc


@pytest.fixture(scope="module")
def node(testserver_binary, tmp_path_factory):
    """A node with uni_grpc on; (its HTTP address, its uni_grpc address)."""
    tmp = tmp_path_factory.mktemp("unigrpc")
    grpc_port = _free_port()
    config = {
        "client": {"token": {"hmac_secret_key": TOKEN_SECRET}},
        "http_api": {"key": API_KEY},
        "uni_grpc": {"enabled": True, "address": "127.0.0.1", "port": grpc_port},
    }
    path = tmp / "herald.yaml"
    path.write_text(json.dumps(config))
    addr = f"127.0.0.1:{_free_port()}"
    log = open(tmp / "herald.log", "w")
    proc = subprocess.Popen([str(testserver_binary), "serve", "--config", str(path), "--address", addr], stdout=log, stderr=log)
    try:
        if not _wait_ready(addr, proc):
            pytest.fail(f"herald did not start: see {tmp / 'herald.log'}")
        yield addr, f"127.0.0.1:{grpc_port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _api(addr, method, params):
    req = urllib.request.Request(
        f"http://{addr}/api/{method}",
        data=json.dumps(params).encode(),
        headers={"X-API-Key": API_KEY, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=WAIT) as r:
        body = json.loads(r.read())
    assert "error" not in body, body
    return body


def test_uni_grpc_client_receives_publications(unistream, node):
    import grpc

    pb2, pb2_grpc = unistream
    http_addr, grpc_addr = node
    token = jwt.encode({"sub": "py-uni", "channels": ["py-news"]}, TOKEN_SECRET, algorithm="HS256")
    with grpc.insecure_channel(grpc_addr) as channel:
        stub = pb2_grpc.CentrifugoUniStreamStub(channel)
        stream = stub.Consume(pb2.ConnectRequest(token=token, name="python"), timeout=WAIT * 3)
        first = next(stream)
        assert first.HasField("connect"), first
        assert first.connect.client
        assert "py-news" in first.connect.subs

        for n in (1, 2):
            _api(http_addr, "publish", {"channel": "py-news", "data": {"n": n}})
            push = next(stream)
            assert push.channel == "py-news", push
            assert json.loads(push.pub.data) == {"n": n}

        _api(http_addr, "disconnect", {"user": "py-uni", "disconnect": {"code": 4001, "reason": "bye"}})
        last = next(stream)
        assert last.HasField("disconnect"), last
        assert last.disconnect.code == 4001
        with pytest.raises(StopIteration):
            next(stream)


def test_uni_grpc_bad_token_is_disconnected(unistream, node):
    import grpc

    pb2, pb2_grpc = unistream
    _, grpc_addr = node
    with grpc.insecure_channel(grpc_addr) as channel:
        stub = pb2_grpc.CentrifugoUniStreamStub(channel)
        stream = stub.Consume(pb2.ConnectRequest(token="not-a-jwt"), timeout=WAIT)
        push = next(stream)
        assert push.HasField("disconnect"), push
        assert push.disconnect.code == 3500
        with pytest.raises(StopIteration):
            next(stream)
