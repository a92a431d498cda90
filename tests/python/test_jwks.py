"""Tokens of identity providers, issued with joserfc, against a real node.

Connection tokens come from one provider's JSON Web Key Set, subscription
tokens from another's (client.subscription_token): the keys are generated
here, and each provider is an HTTP server publishing its public keys.
"""

import http.server
import json
import threading
import time

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from conftest import RECV_TIMEOUT, WSClient


class Provider:
    """A JWKS endpoint serving the public half of its keys, counting fetches."""

    def __init__(self, *keys):
        self.keys = list(keys)
        self.fetches = 0
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                provider.fetches += 1
                body = json.dumps({"keys": [k.as_dict(private=False) for k in provider.keys]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/jwk-set+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/.well-known/jwks.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def rsa(kid):
    return RSAKey.generate_key(2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"})


def ec(kid):
    return ECKey.generate_key("P-256", parameters={"kid": kid, "alg": "ES256", "use": "sig"})


def issue(key, claims):
    """A JWT signed by key, naming it in the kid header."""
    alg = key.as_dict()["alg"]
    return jwt.encode({"alg": alg, "kid": key.kid}, {"exp": int(time.time()) + 3600, **claims}, key)


@pytest.fixture
def providers():
    conn, subs = Provider(rsa("conn-1")), Provider(ec("subs-1"))
    yield conn, subs
    conn.close()
    subs.close()


def refused_connect(node, token):
    """Connects with token; returns the close code and reason."""
    with connect(node.ws_url, open_timeout=RECV_TIMEOUT) as ws:
        ws.send(json.dumps({"id": 1, "connect": {"token": token}}))
        try:
            while True:
                ws.recv(timeout=RECV_TIMEOUT)
        except ConnectionClosed as closed:
            return closed.rcvd.code, closed.rcvd.reason


def test_connection_and_subscription_tokens_from_two_providers(start_node, providers):
    conn, subs = providers
    node = start_node(
        client={
            "token": {"jwks_public_endpoint": conn.url, "user_id_claim": "uid"},
            "subscription_token": {
                "enabled": True,
                "jwks_public_endpoint": subs.url,
                "issuer_regex": r"^https://subs\.idp\.test/$",
                "user_id_claim": "uid",
            },
        }
    )
    conn_key, subs_key = conn.keys[0], subs.keys[0]
    alice = WSClient(node.ws_url, issue(conn_key, {"sub": "idp|1", "uid": "alice"}), node._clients)
    assert conn.fetches == 1

    sub_claims = {"uid": "alice", "channel": "news", "iss": "https://subs.idp.test/"}
    reply = alice.command("subscribe", {"channel": "news", "token": issue(subs_key, sub_claims)})
    assert "subscribe" in reply, reply
    assert subs.fetches == 1

    # Every bad subscription token answers error 103 and leaves the
    # connection open.
    bad = {
        "signed by the connection provider": issue(conn_key, {**sub_claims, "channel": "other"}),
        "wrong issuer": issue(subs_key, {**sub_claims, "channel": "other", "iss": "https://evil.test/"}),
        "unknown kid": issue(ec("subs-9"), {**sub_claims, "channel": "other"}),
        "uid not a string": issue(subs_key, {**sub_claims, "channel": "other", "uid": 7}),
    }
    for name, token in bad.items():
        reply = alice.command("subscribe", {"channel": "other", "token": token})
        assert reply.get("error", {}).get("code") == 103, f"{name}: {reply}"
        alice.expect_open()
    # The unknown kid came within the minimum interval after the first
    # fetch: no new request to the provider.
    assert subs.fetches == 1

    # Bad connection tokens close with 3500; alice is still served.
    for token in (
        issue(subs_key, {"uid": "eve"}),  # the subscription provider's key
        issue(rsa("conn-1"), {"uid": "eve"}),  # a published kid, another key
        issue(conn_key, {"uid": "eve", "channel": "news"}),  # a channel claim
    ):
        assert refused_connect(node, token) == (3500, "invalid token")
    alice.expect_open()
