"""The server API through the real `cent` client, checked by its effects on
real WebSocket connections."""

import base64

import pytest
import requests
from cent import (
    BatchRequest,
    BroadcastRequest,
    ChannelsRequest,
    Client,
    Disconnect,
    DisconnectRequest,
    HistoryRemoveRequest,
    HistoryRequest,
    InfoRequest,
    PresenceRequest,
    PresenceStatsRequest,
    PublishRequest,
    StreamPosition,
    RefreshRequest,
    SubscribeRequest,
    UnsubscribeRequest,
)
from cent.exceptions import (
    CentApiResponseError,
    CentDecodeError,
    CentTransportError,
    CentUnauthorizedError,
)


@pytest.fixture
def cent(node):
    with Client(node.api_url, node.api_key, timeout=5) as c:
        yield c


def test_publish_reaches_subscriber(node, cent):
    ws = node.ws("alice")
    ws.subscribe("chat")
    res = cent.publish(PublishRequest(channel="chat", data={"text": "hi"}, tags={"k": "v"}))
    assert res.offset == 1 and res.epoch
    assert ws.recv() == {
        "push": {"channel": "chat", "pub": {"data": {"text": "hi"}, "offset": 1, "tags": {"k": "v"}}}
    }

    # Without history there is no position.
    ws.subscribe("plain:room")
    res = cent.publish(PublishRequest(channel="plain:room", data=[1, 2]))
    assert res.offset == 0 and res.epoch == ""
    assert ws.recv() == {"push": {"channel": "plain:room", "pub": {"data": [1, 2]}}}

    # skip_history delivers without keeping.
    cent.publish(PublishRequest(channel="chat", data=3, skip_history=True))
    assert ws.recv() == {"push": {"channel": "chat", "pub": {"data": 3}}}
    assert cent.history(HistoryRequest(channel="chat")).offset == 1


def test_publish_idempotency_key(node, cent):
    """A retried publish with the same idempotency_key answers the first
    result and is delivered once."""
    ws = node.ws("alice")
    ws.subscribe("orders")
    first = cent.publish(PublishRequest(channel="orders", data={"n": 1}, idempotency_key="order-1"))
    again = cent.publish(PublishRequest(channel="orders", data={"n": 1}, idempotency_key="order-1"))
    assert (again.offset, again.epoch) == (first.offset, first.epoch)
    cent.publish(PublishRequest(channel="orders", data={"n": 2}, idempotency_key="order-2"))
    assert ws.recv()["push"]["pub"]["data"] == {"n": 1}
    # The next delivery is the second publication: the retry never arrived.
    assert ws.recv()["push"]["pub"]["data"] == {"n": 2}


def test_publish_b64data(node, cent):
    ws = node.ws("alice")
    ws.subscribe("plain:room")
    b64 = base64.b64encode(b'{"from":"b64"}').decode()
    # cent requires data even with b64data; None leaves it out.
    cent.publish(PublishRequest(channel="plain:room", data=None, b64data=b64))
    assert ws.recv() == {"push": {"channel": "plain:room", "pub": {"data": {"from": "b64"}}}}


def test_publish_errors(cent):
    with pytest.raises(CentApiResponseError) as e:
        cent.publish(PublishRequest(channel="nope:chat", data=1))
    assert e.value.code == 102
    assert e.value.message == 'unknown channel: namespace "nope" is not configured'

    with pytest.raises(CentApiResponseError) as e:
        cent.publish(PublishRequest(channel="", data=1))
    assert (e.value.code, e.value.message) == (107, "channel required")

    # data=None is dropped by cent, so the server sees no data.
    with pytest.raises(CentApiResponseError) as e:
        cent.publish(PublishRequest(channel="chat", data=None))
    assert (e.value.code, e.value.message) == (107, "data required (or b64data)")


def test_broadcast(node, cent):
    a = node.ws("alice")
    a.subscribe("news")
    b = node.ws("bob")
    b.subscribe("plain:news")
    res = cent.broadcast(BroadcastRequest(channels=["news", "plain:news", "nope:x"], data={"n": 1}))
    assert len(res.responses) == 3
    assert res.responses[0].error is None and res.responses[0].result.offset == 1
    assert res.responses[1].error is None and res.responses[1].result.offset == 0
    assert res.responses[2].error.code == 102 and res.responses[2].result is None
    assert a.recv() == {"push": {"channel": "news", "pub": {"data": {"n": 1}, "offset": 1}}}
    assert b.recv() == {"push": {"channel": "plain:news", "pub": {"data": {"n": 1}}}}


def test_presence(node, cent):
    assert cent.presence(PresenceRequest(channel="chat")).presence == {}
    a = node.ws("alice", info={"name": "Alice"})
    a.subscribe("chat")
    b = node.ws("bob")
    b.subscribe("chat")
    b2 = node.ws("bob")
    b2.subscribe("chat")

    presence = cent.presence(PresenceRequest(channel="chat")).presence
    assert set(presence) == {a.client_id, b.client_id, b2.client_id}
    assert presence[a.client_id].user == "alice"
    assert presence[a.client_id].client == a.client_id
    assert presence[a.client_id].conn_info == {"name": "Alice"}
    assert presence[b.client_id].user == "bob"
    assert presence[b.client_id].conn_info is None

    stats = cent.presence_stats(PresenceStatsRequest(channel="chat"))
    assert (stats.num_clients, stats.num_users) == (3, 2)

    with pytest.raises(CentApiResponseError) as e:
        cent.presence(PresenceRequest(channel="plain:chat"))
    assert e.value.code == 108


def test_history(cent):
    for i in range(1, 6):
        cent.publish(PublishRequest(channel="chat", data={"i": i}))
    top = cent.history(HistoryRequest(channel="chat"))
    assert (top.offset, top.publications) == (5, [])

    all_ = cent.history(HistoryRequest(channel="chat", limit=-1))
    assert [p.data for p in all_.publications] == [{"i": i} for i in range(1, 6)]
    assert [p.offset for p in all_.publications] == [1, 2, 3, 4, 5]
    assert all_.epoch == top.epoch

    since = StreamPosition(offset=3, epoch=top.epoch)
    after = cent.history(HistoryRequest(channel="chat", limit=10, since=since))
    assert [p.offset for p in after.publications] == [4, 5]
    back = cent.history(HistoryRequest(channel="chat", limit=10, since=since, reverse=True))
    assert [p.offset for p in back.publications] == [2, 1]

    with pytest.raises(CentApiResponseError) as e:
        cent.history(HistoryRequest(channel="chat", since=StreamPosition(offset=1, epoch="other")))
    assert e.value.code == 112
    with pytest.raises(CentApiResponseError) as e:
        cent.history(HistoryRequest(channel="plain:chat"))
    assert e.value.code == 108


def test_history_remove(cent):
    cent.publish(PublishRequest(channel="chat", data=1))
    cent.publish(PublishRequest(channel="chat", data=2))
    cent.history_remove(HistoryRemoveRequest(channel="chat"))
    res = cent.history(HistoryRequest(channel="chat", limit=-1))
    assert (res.publications, res.offset) == ([], 2)
    assert cent.publish(PublishRequest(channel="chat", data=3)).offset == 3


def test_channels(node, cent):
    assert cent.channels(ChannelsRequest()).channels == {}
    a = node.ws("alice")
    a.subscribe("chat")
    a.subscribe("plain:news")
    b = node.ws("bob")
    b.subscribe("chat")
    res = cent.channels(ChannelsRequest())
    assert {k: v.num_clients for k, v in res.channels.items()} == {"chat": 2, "plain:news": 1}
    res = cent.channels(ChannelsRequest(pattern="plain:*"))
    assert {k: v.num_clients for k, v in res.channels.items()} == {"plain:news": 1}


def test_info(node, cent):
    a = node.ws("alice")
    a.subscribe("chat")
    node.ws("bob")
    nodes = cent.info(InfoRequest()).nodes
    assert len(nodes) == 1
    n = nodes[0]
    assert n.name == "python-node" and n.version.startswith("0.") and n.uid
    assert (n.num_clients, n.num_users, n.num_channels, n.num_subs) == (2, 2, 1, 1)


def test_disconnect(node, cent):
    a1, a2, b = node.ws("alice"), node.ws("alice"), node.ws("bob")
    cent.disconnect(DisconnectRequest(user="alice"))
    assert a1.expect_close() == (3503, "force disconnect")
    assert a2.expect_close() == (3503, "force disconnect")
    b.expect_open()

    c1, c2 = node.ws("carol"), node.ws("carol")
    cent.disconnect(
        DisconnectRequest(user="carol", client=c1.client_id, disconnect=Disconnect(code=4500, reason="bye"))
    )
    assert c1.expect_close() == (4500, "bye")
    c2.expect_open()


def test_unsubscribe(node, cent):
    a, b = node.ws("alice"), node.ws("bob")
    a.subscribe("chat")
    b.subscribe("chat")
    cent.unsubscribe(UnsubscribeRequest(user="alice", channel="chat"))
    assert a.recv() == {
        "push": {"channel": "chat", "unsubscribe": {"code": 2000, "reason": "server unsubscribe"}}
    }
    cent.publish(PublishRequest(channel="chat", data=1, skip_history=True))
    assert b.recv() == {"push": {"channel": "chat", "pub": {"data": 1}}}
    a.expect_open()


def test_subscribe_and_refresh(node, cent):
    ws = node.ws("alice")
    cent.subscribe(SubscribeRequest(user="alice", channel="chat", data={"welcome": True}))
    push = ws.recv()["push"]
    assert push["channel"] == "chat" and push["subscribe"]["data"] == {"welcome": True}
    cent.publish(PublishRequest(channel="chat", data={"n": 1}))
    assert ws.recv()["push"]["pub"]["data"] == {"n": 1}
    with pytest.raises(CentApiResponseError) as e:
        cent.subscribe(SubscribeRequest(user="alice", channel="nope:x"))
    assert e.value.code == 102
    cent.refresh(RefreshRequest(user="alice", expired=True))
    assert ws.expect_close() == (3005, "connection expired")


def test_batch(node, cent):
    ws = node.ws("alice")
    ws.subscribe("plain:room")
    res = cent.batch(
        BatchRequest(
            requests=[
                PublishRequest(channel="chat", data=1),
                PublishRequest(channel="plain:room", data=2),
                PresenceStatsRequest(channel="chat"),
            ]
        )
    )
    assert [type(r).__name__ for r in res.replies] == ["PublishResult", "PublishResult", "PresenceStatsResult"]
    assert res.replies[0].offset == 1
    assert ws.recv() == {"push": {"channel": "plain:room", "pub": {"data": 2}}}

    # cent quirk: a failing command's {"error":…} reply is indexed by method
    # name while decoding, so cent raises instead of returning the error.
    with pytest.raises((KeyError, CentDecodeError)):
        cent.batch(BatchRequest(requests=[PublishRequest(channel="nope:x", data=1)]))


def test_auth(node):
    with Client(node.api_url, "wrong-key", timeout=5) as c:
        with pytest.raises(CentUnauthorizedError):
            c.info(InfoRequest())
    r = requests.post(node.api_url + "/info", json={}, headers={"Authorization": "apikey " + node.api_key}, timeout=5)
    assert r.status_code == 200 and "nodes" in r.json()["result"]
    r = requests.post(node.api_url + "/info", json={}, timeout=5)
    assert (r.status_code, r.text) == (401, "")


def test_transport_error_mode(start_node):
    n = start_node(api={"error_mode": "transport"})
    with Client(n.api_url, n.api_key, timeout=5) as c:
        with pytest.raises(CentTransportError) as e:
            c.publish(PublishRequest(channel="nope:x", data=1))
        assert e.value.status_code == 404
        with pytest.raises(CentTransportError) as e:
            c.history(HistoryRequest(channel="plain:x"))
        assert e.value.status_code == 400
        assert c.publish(PublishRequest(channel="chat", data=1)).offset == 1
    r = requests.post(n.api_url + "/publish", json={"channel": "", "data": 1}, headers={"X-API-Key": n.api_key}, timeout=5)
    assert r.status_code == 400
    assert r.json() == {"code": 107, "message": "channel required"}
