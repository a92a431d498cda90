// Map subscriptions with a tags filter, with per-key Fossil deltas and
// with a publish debounce, through centrifuge-js 5.8: the filter reaches
// the state, the stream and live changes; each key's changes are deltas
// against its own previous value (the one from the snapshot included);
// 'publish_debounce' reaches the SDK. Server changes go through the
// HTTP API's map_publish with 'tags'. On one node with the memory engine,
// and across two nodes on Redis and on PostgreSQL (subscribers on one
// node, the API called on the other).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { EventLog, connect, newClient, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { lockPostgres } from './lib/pglock.mjs';
import { api, redisAddr, redisEngine, requireServices, transportConfig, uniqueName } from './lib/transports.mjs';

const DSN = process.env.HERALD_TEST_POSTGRES_DSN;

const NAMESPACES = [
  {
    name: 'tagged',
    subscription_type: 'map',
    allow_subscribe_for_client: true,
    allow_tags_filter: true,
    map: { mode: 'persistent', allow_publish_for_client: true },
  },
  {
    name: 'mapdelta',
    subscription_type: 'map',
    allow_subscribe_for_client: true,
    allowed_delta_types: ['fossil'],
    delta_publish: true,
    client_publish_debounce_interval: '50ms',
    map: { mode: 'persistent', allow_publish_for_client: true },
  },
];

function nodeConfig(engine) {
  return transportConfig({ ...(engine ? { engine } : {}), channel: { namespaces: NAMESPACES } });
}

/**
 * suite runs the tests with subscribers on one node and the API called on
 * another (the same node for the memory engine).
 */
function suite(name, skip, engine) {
  describe(name, { skip }, () => {
    let subNode;
    let apiNode;
    let pgLock;
    const clients = [];
    before(async () => {
      if (skip) return;
      if (engine?.type === 'postgres') pgLock = await lockPostgres(`map-delta.test.mjs ${name}`);
      subNode = await startHerald(nodeConfig(engine));
      apiNode = engine ? await startHerald(nodeConfig(engine)) : subNode;
    });
    after(async () => {
      for (const c of clients) c.disconnect();
      await subNode?.stop();
      if (apiNode !== subNode) await apiNode?.stop();
      pgLock?.release();
    });

    async function client(user) {
      const c = newClient(subNode.url, { token: connectionToken(user) });
      clients.push(c);
      await connect(c);
      return c;
    }

    const mapPublish = (channel, key, data, tags) =>
      api(apiNode.port, 'map_publish', { channel, key, data, ...(tags ? { tags } : {}) });

    test('a tags filter on a map subscription selects the snapshot and the live changes', async () => {
      const ch = 'tagged:board';
      await mapPublish(ch, 'eng_item', { v: 1 }, { team: 'eng' });
      await mapPublish(ch, 'sales_item', { v: 2 }, { team: 'sales' });
      await mapPublish(ch, 'eng_item_2', { v: 3 }, { team: 'eng' });
      const c = await client('reader');
      const sub = c.newMapSubscription(ch, { tagsFilter: { key: 'team', cmp: 'eq', val: 'eng' } });
      const updates = new EventLog(sub, 'update');
      const synced = waitEvent(sub, 'sync');
      sub.subscribe();
      const { entries } = await synced;
      assert.deepEqual(entries.map((e) => e.key).sort(), ['eng_item', 'eng_item_2']);

      await mapPublish(ch, 'sales_item', { v: 4 }, { team: 'sales' });
      await mapPublish(ch, 'eng_item', { v: 5 }, { team: 'eng' });
      const [got] = await updates.count(1);
      assert.equal(got.key, 'eng_item');
      assert.deepEqual(got.data, { v: 5 });
      assert.equal(updates.events.length, 1, 'the sales change passed the filter');
    });

    test('map changes are Fossil deltas per key, against the snapshot too', async () => {
      const ch = 'mapdelta:scores';
      const filler = { a: 'a'.repeat(500), b: 'b'.repeat(500) };
      await mapPublish(ch, 'a', { x: 1, filler: filler.a });
      await mapPublish(ch, 'b', { x: 1, filler: filler.b });
      const c = await client('scorer');
      const sub = c.newMapSubscription(ch, { delta: 'fossil' });
      const updates = new EventLog(sub, 'update');
      const synced = waitEvent(sub, 'sync');
      const subscribed = waitEvent(sub, 'subscribed');
      sub.subscribe();
      assert.equal((await synced).entries.length, 2);
      await subscribed;

      await mapPublish(ch, 'a', { x: 2, filler: filler.a });
      await mapPublish(ch, 'b', { x: 2, filler: filler.b });
      await mapPublish(ch, 'a', { x: 3, filler: filler.a });
      const got = await updates.count(3);
      assert.deepEqual(
        got.map((u) => [u.key, u.data.x, u.data.filler === filler[u.key]]),
        [['a', 2, true], ['b', 2, true], ['a', 3, true]],
      );
      const stats = sub.deltaStats();
      assert.equal(stats.numFullPayloads, 2, 'the snapshot values only');
      assert.equal(stats.numDeltaPayloads, 3);
      assert.ok(stats.bytesReceived < stats.bytesDecoded);
    });

    test('client_publish_debounce_interval reaches the SDK, which coalesces a key\'s publishes', async () => {
      const ch = 'mapdelta:cursor';
      const writer = await client('writer');
      const reader = await client('watcher');
      const watched = reader.newMapSubscription(ch);
      const updates = new EventLog(watched, 'update');
      const watchedSynced = waitEvent(watched, 'sync');
      watched.subscribe();
      await watchedSynced;

      const sub = writer.newMapSubscription(ch);
      const synced = waitEvent(sub, 'sync');
      sub.subscribe();
      await synced;
      // All four in one tick: the first goes at once and the other three
      // fall in its interval whatever a round trip takes (awaiting the
      // first took over the 50 ms on a loaded machine, and x: 2 went on its own).
      await Promise.all([1, 2, 3, 4].map((x) => sub.publish('cursor', { x })));
      const got = await updates.count(2);
      assert.deepEqual(got.map((u) => u.data.x), [1, 4], 'the first at once, the rest as the latest');
    });
  });
}

suite('memory', false, undefined);
suite(
  'redis, two nodes',
  !redisAddr && !requireServices ? 'HERALD_TEST_REDIS_ADDR is not set: eval "$(scripts/services.sh env)"' : false,
  redisEngine(uniqueName('herald_mapdelta_js')),
);
suite(
  'postgres, two nodes',
  !DSN && !requireServices ? 'HERALD_TEST_POSTGRES_DSN is not set: eval "$(scripts/services.sh env)"' : false,
  { type: 'postgres', postgres: { dsn: DSN, schema: `herald_mapdelta_js_${randomBytes(5).toString('hex')}` } },
);
