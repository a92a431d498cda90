"""The WebSocket handshake as Python clients send it.

centrifuge-python's default client speaks JSON. Releases of it that hand
the websockets library an empty subprotocol list send an empty
Sec-WebSocket-Protocol header (websockets writes the header for []), which
Herald answered with 400 "malformed HTTP request" while Centrifugo upgrades:
an empty or blank header is JSON, as no header is.
"""

import asyncio
import json

from cent import Client as Cent, PublishRequest
from centrifuge import Client
from websockets.sync.client import connect

from sdkevents import Events, SubEvents, next_event

WAIT = 10.0


def _connect_json(url, subprotocols, token):
    """Connects with websockets as the client libraries call it and returns
    the connect reply and the subprotocol the server chose."""
    with connect(url, subprotocols=subprotocols, open_timeout=WAIT) as ws:
        ws.send(json.dumps({"id": 1, "connect": {"token": token}}))
        reply = json.loads(ws.recv(timeout=WAIT))
        return reply, ws.subprotocol


def test_empty_subprotocol_list_is_json(node):
    # subprotocols=[] makes websockets send "Sec-WebSocket-Protocol:" with
    # no value: before the fix, the handshake failed with HTTP 400.
    reply, chosen = _connect_json(node.ws_url, [], node.token("py-empty"))
    assert "connect" in reply, reply
    assert chosen is None


def test_json_subprotocol_is_json(node):
    reply, chosen = _connect_json(node.ws_url, ["centrifuge-json"], node.token("py-json"))
    assert "connect" in reply, reply
    assert chosen == "centrifuge-json"


def _default_client_roundtrip(node, **kwargs):
    """centrifuge-python connects, subscribes and receives a publication
    made through the server API."""

    async def run():
        events = Events()
        client = Client(node.ws_url, token=node.token("py-default"), events=events, proxy=None, **kwargs)
        await client.connect()
        try:
            await next_event(events.connected)
            sub_events = SubEvents()
            sub = client.new_subscription("py-news", events=sub_events)
            await sub.subscribe()
            await next_event(sub_events.subscribed)
            with Cent(node.api_url, node.api_key, timeout=5) as cent:
                await asyncio.to_thread(cent.publish, PublishRequest(channel="py-news", data={"n": 1}))
            ctx = await next_event(sub_events.publications)
            data = ctx.pub.data
            if isinstance(data, (bytes, bytearray)):
                data = json.loads(data)  # a Protobuf client gets the JSON's bytes
            assert data == {"n": 1}
        finally:
            await client.disconnect()

    asyncio.run(run())


def test_default_client_json(node):
    _default_client_roundtrip(node)


def test_default_client_protobuf(node):
    _default_client_roundtrip(node, use_protobuf=True)
