// Map subscriptions on the Redis engine, across two nodes, with
// centrifuge-js 5.8: keys set through one node reach a subscriber of the
// other and a late subscriber's snapshot over several pages; a subscriber
// that moves to the other node recovers what it missed; a key's TTL
// removes it for every node's subscribers.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';

import { EventLog, connect, newClient, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { redisAddr, redisEngine, requireServices, uniqueName } from './lib/transports.mjs';

const skip = !redisAddr && !requireServices ? 'no Redis: HERALD_TEST_REDIS_ADDR is unset (scripts/services.sh env)' : false;

let nodeA;
let nodeB;
const clients = [];

before(async () => {
  if (skip) return;
  assert.ok(redisAddr, 'HERALD_TEST_REDIS_ADDR must be set when HERALD_TEST_REQUIRE_SERVICES=1');
  const config = {
    engine: redisEngine(uniqueName('herald_map_js')),
    channel: {
      namespaces: [
        {
          name: 'board',
          subscription_type: 'map',
          allow_subscribe_for_client: true,
          map: { mode: 'recoverable', key_ttl: '300s', allow_publish_for_client: true, allow_remove_for_client: true },
        },
        {
          name: 'cursors',
          subscription_type: 'map',
          allow_subscribe_for_client: true,
          map: { mode: 'ephemeral', key_ttl: '1s', allow_publish_for_client: true },
        },
      ],
    },
  };
  [nodeA, nodeB] = await Promise.all([startHerald(config), startHerald(config)]);
});

after(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all([nodeA?.stop(), nodeB?.stop()]);
});

function newClientOn(node, user, options = {}) {
  const c = newClient(node.url, { token: connectionToken(user), ...options });
  clients.push(c);
  return c;
}

async function client(node, user) {
  const c = newClientOn(node, user);
  await connect(c);
  return c;
}

async function follow(c, channel) {
  const sub = c.newMapSubscription(channel, { pageSize: 100 });
  const updates = new EventLog(sub, 'update');
  const syncs = new EventLog(sub, 'sync');
  sub.subscribe();
  const [{ entries }] = await syncs.count(1);
  return { sub, updates, syncs, entries: Object.fromEntries(entries.map((e) => [e.key, e.data])) };
}

test('keys set through one node reach the other node live and in a late snapshot', { skip }, async () => {
  const writer = await client(nodeA, 'writer');
  const live = await follow(await client(nodeB, 'reader'), 'board:two');
  for (let i = 0; i < 150; i++) {
    await writer.mapPublish('board:two', `k${String(i).padStart(3, '0')}`, { v: i });
  }
  await writer.mapRemove('board:two', 'k000');
  const got = await live.updates.count(151);
  assert.equal(got[150].key, 'k000');
  assert.equal(got[150].removed, true);
  const late = await follow(await client(nodeB, 'late'), 'board:two');
  assert.equal(Object.keys(late.entries).length, 149);
  assert.deepEqual(late.entries.k149, { v: 149 });
});

/**
 * balancer is a TCP proxy on loopback standing for a load balancer: it
 * forwards new connections to `target`, and `moveTo` sends later ones to
 * another node and cuts the open ones, as a node going away would.
 */
async function balancer(target) {
  const sockets = new Set();
  const lb = { target };
  const server = net.createServer((down) => {
    const up = net.connect(lb.target.port, '127.0.0.1');
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    down.pipe(up).pipe(down);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  lb.url = `ws://127.0.0.1:${server.address().port}/connection/websocket`;
  lb.moveTo = (node) => {
    lb.target = node;
    for (const s of sockets) s.destroy();
  };
  lb.close = () => {
    for (const s of sockets) s.destroy();
    return new Promise((resolve) => server.close(resolve));
  };
  return lb;
}

test('a subscriber moved to the other node recovers what it missed', { skip }, async (t) => {
  const lb = await balancer(nodeA);
  t.after(() => lb.close());
  const writer = await client(nodeA, 'writer');
  await writer.mapPublish('board:move', 'a', { v: 1 });
  const reader = newClient(lb.url, { token: connectionToken('reader') });
  clients.push(reader);
  await connect(reader);
  const f = await follow(reader, 'board:move');
  // The changes are made while the reader is away: the balancer holds
  // its reconnection until they are in.
  const disconnected = waitEvent(reader, 'connecting');
  const resubscribed = waitEvent(f.sub, 'subscribed');
  lb.target = { port: 1 }; // nothing listens there: reconnects fail for now
  lb.moveTo(lb.target);
  await disconnected;
  await writer.mapPublish('board:move', 'b', { v: 2 });
  await writer.mapRemove('board:move', 'a');
  lb.target = nodeB;
  assert.equal((await resubscribed).recovered, true, 'recovered on the other node');
  const got = await f.updates.count(2);
  assert.deepEqual(got.map((u) => [u.key, u.removed === true]), [['b', false], ['a', true]]);
  assert.equal(f.syncs.events.length, 1, 'no second snapshot after a recovery');
});

test('a key expires after its TTL for the subscribers of every node', { skip }, async () => {
  const writer = await client(nodeA, 'writer');
  const onA = await follow(await client(nodeA, 'a'), 'cursors:room');
  const onB = await follow(await client(nodeB, 'b'), 'cursors:room');
  await writer.mapPublish('cursors:room', 'pointer', { x: 1 });
  for (const f of [onA, onB]) {
    const [set, expired] = await f.updates.count(2);
    assert.equal(set.key, 'pointer');
    assert.equal(expired.key, 'pointer');
    assert.equal(expired.removed, true);
  }
});
