"""Channel compaction and state invalidation with centrifuge-python.

centrifuge-python asks for channel compaction on every subscribe; where the
namespace allows it, Herald gives the subscription a numeric channel id
and its publications and joins carry the id instead of the channel name,
which the client routes. The server API's invalidate_state makes it drop
what it cached: 2502 for a subscription (it resubscribes without its
position), 3014 for the connection (it reconnects with a new token).
Both encodings.
"""

import asyncio
import json
import urllib.request

import pytest
from centrifuge import Client, ClientEventHandler, SubscriptionEventHandler

WAIT = 10.0

CHANNELS = {
    "namespaces": [
        {
            "name": "cc",
            "allow_subscribe_for_client": True,
            "allow_channel_compaction": True,
            "presence": True,
            "join_leave": True,
            "force_push_join_leave": True,
        },
        {
            "name": "ccrec",
            "allow_subscribe_for_client": True,
            "allow_channel_compaction": True,
            "history_size": 10,
            "history_ttl": "300s",
            "force_recovery": True,
        },
    ],
}


class Events(ClientEventHandler):
    """Client events, in one queue as (kind, value)."""

    def __init__(self):
        self.queue = asyncio.Queue()

    async def on_connecting(self, ctx):
        await self.queue.put(("connecting", ctx.code))

    async def on_connected(self, ctx):
        await self.queue.put(("connected", None))


class SubEvents(SubscriptionEventHandler):
    """Subscription events, in one queue as (kind, value)."""

    def __init__(self):
        self.queue = asyncio.Queue()

    async def on_subscribing(self, ctx):
        await self.queue.put(("subscribing", ctx.code))

    async def on_subscribed(self, ctx):
        await self.queue.put(("subscribed", (ctx.was_recovering, ctx.recovered)))

    async def on_publication(self, ctx):
        data = ctx.pub.data
        await self.queue.put(("publication", json.loads(data) if isinstance(data, bytes) else data))

    async def on_join(self, ctx):
        await self.queue.put(("join", ctx.info.user))


async def _until(queue, kind, want=lambda value: True):
    """The value of the next event of kind that want accepts; others pass."""
    while True:
        got, value = await asyncio.wait_for(queue.get(), WAIT)
        if got == kind and want(value):
            return value


def _api(node, method, params):
    req = urllib.request.Request(
        f"{node.api_url}/{method}",
        data=json.dumps(params).encode(),
        headers={"X-API-Key": node.api_key, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=WAIT) as res:
        body = json.loads(res.read())
    assert "error" not in body, body
    return body["result"]


async def _call(node, method, params):
    return await asyncio.to_thread(_api, node, method, params)


@pytest.mark.parametrize("use_protobuf", [False, True], ids=["json", "protobuf"])
def test_compaction_and_invalidation(start_node, use_protobuf):
    node = start_node(channels=CHANNELS)
    user = f"py-compact-{'pb' if use_protobuf else 'json'}"
    room, doc = f"cc:room-{user}", f"ccrec:doc-{user}"

    async def token():
        return node.token(user)

    async def run():
        events = Events()
        client = Client(node.ws_url, events=events, get_token=token, use_protobuf=use_protobuf, proxy=None)
        await client.connect()
        try:
            await _until(events.queue, "connected")
            room_events = SubEvents()
            sub = client.new_subscription(room, events=room_events, join_leave=True)
            await sub.subscribe()
            await _until(room_events.queue, "subscribed")
            # Its own join and a publication, both routed by the channel id.
            assert await _until(room_events.queue, "join") == user
            await _call(node, "publish", {"channel": room, "data": {"n": 1}})
            assert await _until(room_events.queue, "publication") == {"n": 1}

            doc_events = SubEvents()
            rec = client.new_subscription(doc, events=doc_events)
            await rec.subscribe()
            await _until(doc_events.queue, "subscribed")
            await _call(node, "publish", {"channel": doc, "data": {"v": 1}})
            await _until(doc_events.queue, "publication")

            await _call(node, "invalidate_state", {"user": user, "channel": doc})
            assert await _until(doc_events.queue, "subscribing", lambda code: code != 0) == 2502
            # The position is dropped: the resubscribe recovers from one the
            # server never gave, and the application reloads its state.
            assert await _until(doc_events.queue, "subscribed") == (True, False)

            await _call(node, "invalidate_state", {"user": user})
            assert await _until(events.queue, "connecting", lambda code: code != 0) == 3014
            await _until(events.queue, "connected")
            await _until(room_events.queue, "subscribed")
            await _call(node, "publish", {"channel": room, "data": {"n": 2}})
            assert await _until(room_events.queue, "publication", lambda data: data == {"n": 2}) == {"n": 2}
        finally:
            await client.disconnect()

    asyncio.run(run())
