"""centrifuge-python's client and subscription events as queues.

The proxy suites (test_proxy.py, test_grpc_proxy.py) drive clients that
connect, subscribe and receive publications through a backend; each awaits
an event with a timeout rather than sleeping.
"""

import asyncio

import pytest

from centrifuge import Client, ClientEventHandler, ReplyError, SubscriptionEventHandler

WAIT = 10.0


class Events(ClientEventHandler):
    """Client events, each kind in a queue a test awaits with a timeout."""

    def __init__(self):
        self.connected = asyncio.Queue()
        self.disconnected = asyncio.Queue()

    async def on_connected(self, ctx):
        await self.connected.put(ctx)

    async def on_disconnected(self, ctx):
        await self.disconnected.put(ctx)


class SubEvents(SubscriptionEventHandler):
    """Subscription events, each kind in a queue."""

    def __init__(self):
        self.subscribed = asyncio.Queue()
        self.unsubscribed = asyncio.Queue()
        self.publications = asyncio.Queue()

    async def on_subscribed(self, ctx):
        await self.subscribed.put(ctx)

    async def on_unsubscribed(self, ctx):
        await self.unsubscribed.put(ctx)

    async def on_publication(self, ctx):
        await self.publications.put(ctx)


async def next_event(queue, timeout=WAIT):
    """The next item of queue; fails the test after timeout seconds."""
    return await asyncio.wait_for(queue.get(), timeout)


async def connect(url, **kwargs):
    """Connects a client; fails with the disconnect if it comes first."""
    events = Events()
    client = Client(url, events=events, proxy=None, **kwargs)
    await client.connect()
    connected = asyncio.ensure_future(events.connected.get())
    disconnected = asyncio.ensure_future(events.disconnected.get())
    done, pending = await asyncio.wait({connected, disconnected}, timeout=WAIT, return_when=asyncio.FIRST_COMPLETED)
    for f in pending:
        f.cancel()
    if connected in done:
        return client, connected.result()
    await client.disconnect()
    if disconnected in done:
        ctx = disconnected.result()
        pytest.fail(f"disconnected instead of connected: {ctx.code} {ctx.reason}")
    pytest.fail(f"not connected within {WAIT} s")


async def subscribe(client, channel):
    """Subscribes client to channel and waits for the subscribed event."""
    events = SubEvents()
    sub = client.new_subscription(channel, events=events)
    await sub.subscribe()
    return sub, events, await next_event(events.subscribed)


# The codes both proxy backends answer with (tests/js/lib/proxybackend.mjs
# and grpc_proxy_backend.py follow one contract).
SUBSCRIBE_DENIED = 403
PUBLISH_DENIED = 1403


async def check_subscribe_and_publish(alice, bob):
    """The proxy backends' contract for subscribe and publish, seen by two
    connected clients: bob subscribes with the backend's initial data,
    alice is refused px:py-denied with its code, and alice's publications
    reach bob as sent (px:py-room), rewritten by the backend
    (px:py-rewrite), or are refused (px:py-readonly)."""
    _, room, ctx = await subscribe(bob, "px:py-room")
    assert ctx.data == {"initial": "px:py-room", "user": "py-bob"}
    denied_events = SubEvents()
    denied = alice.new_subscription("px:py-denied", events=denied_events)
    await denied.subscribe()
    u = await next_event(denied_events.unsubscribed)
    assert u.code == SUBSCRIBE_DENIED, u

    _, rewrite, _ = await subscribe(bob, "px:py-rewrite")
    await alice.publish("px:py-room", {"text": "hi"})
    assert (await next_event(room.publications)).pub.data == {"text": "hi"}
    await alice.publish("px:py-rewrite", {"text": "raw"})
    got = (await next_event(rewrite.publications)).pub.data
    assert got == {"original": {"text": "raw"}, "rewritten": True, "by": "py-alice"}
    with pytest.raises(ReplyError) as err:
        await alice.publish("px:py-readonly", {"text": "no"})
    assert err.value.code == PUBLISH_DENIED
