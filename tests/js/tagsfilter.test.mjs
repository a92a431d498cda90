// Tags filter and cache recovery with centrifuge-js: a subscription with a
// tagsFilter receives exactly the publications whose tags pass it, for every
// operator the SDK offers; bad filters are refused with error 107 and leave
// the connection and other subscribers alone; cache recovery gives a new or
// returning subscriber the channel's latest publication; a shared poll
// subscription (not built) is refused with 103. On one node with the
// memory engine, and across two nodes on Redis and on PostgreSQL (subscriber on
// one node, publisher on the other).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { lockPostgres } from './lib/pglock.mjs';
import { dropSchema } from './lib/psql.mjs';
import { CASES, PUBS, leaf } from './lib/tagscases.mjs';
import { api, redisAddr, redisEngine, requireServices, transportConfig, uniqueName } from './lib/transports.mjs';

const DSN = process.env.HERALD_TEST_POSTGRES_DSN;
const pgSchema = `herald_tags_js_${randomBytes(5).toString('hex')}`;

const NAMESPACES = [
  { name: 'tf', allow_subscribe_for_client: true, allow_tags_filter: true, history_size: 100, history_ttl: '300s', force_recovery: true },
  { name: 'plain', allow_subscribe_for_client: true },
  { name: 'cache', allow_subscribe_for_client: true, history_size: 1, history_ttl: '300s', force_recovery: true, force_recovery_mode: 'cache' },
  {
    name: 'auto',
    allow_subscribe_for_client: true,
    history_size: 1,
    history_ttl: '300s',
    force_recovery: true,
    force_recovery_mode: 'cache',
    auto_cache_recover: true,
  },
];

/** refused subscribes sub and resolves with its 'unsubscribed' context (a refusal). */
async function refused(sub) {
  const unsubscribed = waitEvent(sub, 'unsubscribed');
  const subscribed = new EventLog(sub, 'subscribed');
  sub.subscribe();
  const ctx = await unsubscribed;
  assert.equal(subscribed.events.length, 0, 'subscribed although refused');
  return ctx;
}

/**
 * suite runs the tests against a subscriber node and a publisher node (the
 * same node for the memory engine).
 */
function suite(name, skip, nodes) {
  describe(name, { skip, concurrency: true }, () => {
    let sub;
    let pub;
    let client;
    before(async () => {
      if (skip) return;
      [sub, pub] = await nodes();
      client = newClient(sub.url, { token: connectionToken(`tags-${name}`) });
      await connect(client);
    });
    after(async () => {
      client?.disconnect();
    });
    const publish = (channel, n, tags) => api(pub.port, 'publish', { channel, data: { n }, tags });

    test('every operator passes exactly the publications it should', async () => {
      await Promise.all(
        CASES.map(async (c) => {
          const channel = `tf:op-${c.name}`;
          const s = client.newSubscription(channel, { tagsFilter: c.filter });
          const got = new EventLog(s, 'publication');
          await subscribe(s);
          for (const [i, tags] of PUBS.entries()) await publish(channel, i + 1, tags);
          await publish(channel, 99, c.end);
          const events = await got.count(c.want.length + 1);
          assert.deepEqual(
            events.map((p) => p.data.n),
            [...c.want, 99],
            `${c.name}: ${JSON.stringify(c.filter)}`,
          );
          for (const p of events) {
            const sent = p.data.n === 99 ? c.end : PUBS[p.data.n - 1];
            assert.deepEqual(p.tags ?? {}, sent, `${c.name}: the publication's tags`);
          }
          s.unsubscribe();
        }),
      );
    });

    test('bad filters are refused with 107, the connection and other subscribers unaffected', async () => {
      const other = client.newSubscription('tf:bad-other', { tagsFilter: { key: 'k', cmp: 'ex' } });
      const otherPubs = new EventLog(other, 'publication');
      await subscribe(other);
      let deep = leaf('k', 'eq', 'v');
      for (let i = 0; i < 8; i++) deep = { op: 'not', nodes: [deep] };
      const many = Array.from({ length: 129 }, (_, i) => `v${i}`);
      const bad = {
        'nested too deep': ['tf:bad1', deep],
        'unknown operator': ['tf:bad2', leaf('k', 'like', 'v')],
        'too many values': ['tf:bad3', { key: 'k', cmp: 'in', vals: many }],
        'unknown op': ['tf:bad4', { op: 'xor', nodes: [leaf('k', 'eq', 'v')] }],
        'not allowed in the namespace': ['plain:bad5', leaf('k', 'eq', 'v')],
      };
      for (const [what, [channel, filter]] of Object.entries(bad)) {
        const s = client.newSubscription(channel, { tagsFilter: filter });
        const ctx = await refused(s);
        assert.equal(ctx.code, 107, `${what}: ${JSON.stringify(ctx)}`);
        client.removeSubscription(s);
      }
      assert.equal(client.state, 'connected');
      await publish('tf:bad-other', 1, { k: '1' });
      assert.equal((await otherPubs.count(1))[0].data.n, 1);
      other.unsubscribe();
    });

    test('a shared poll subscription is refused with 107, not taken for a stream', async () => {
      const s = client.newSharedPollSubscription('plain:votes');
      const ctx = await refused(s);
      assert.equal(ctx.code, 107, JSON.stringify(ctx));
      client.removeSharedPollSubscription(s);
      assert.equal(client.state, 'connected');
    });

    test('cache recovery: the latest publication to a new subscriber, and again on reconnect', async () => {
      for (let n = 1; n <= 3; n++) await publish('cache:price', n);
      const c = newClient(sub.url, { token: connectionToken(`tags-${name}-cache`) });
      await connect(c);
      const s = c.newSubscription('cache:price', { since: {} });
      const pubs = new EventLog(s, 'publication');
      const subscribed = new EventLog(s, 'subscribed');
      await subscribe(s);
      assert.equal(subscribed.events[0].recovered, true);
      assert.deepEqual((await pubs.count(1)).map((p) => p.data.n), [3]);

      // Away while two more are published: back, it gets only the latest.
      const disconnected = waitEvent(c, 'disconnected');
      c.disconnect();
      await disconnected;
      await publish('cache:price', 4);
      await publish('cache:price', 5);
      await connect(c);
      await subscribed.count(2);
      await publish('cache:price', 6);
      assert.deepEqual((await pubs.count(3)).map((p) => p.data.n), [3, 5, 6]);
      c.disconnect();
    });

    test('auto_cache_recover: the latest publication without asking', async () => {
      await publish('auto:status', 1);
      await publish('auto:status', 2);
      const s = client.newSubscription('auto:status');
      const pubs = new EventLog(s, 'publication');
      await subscribe(s);
      assert.deepEqual((await pubs.count(1)).map((p) => p.data.n), [2]);
      s.unsubscribe();
    });

    test('a filtered subscriber recovers only the matching publications', async () => {
      const c = newClient(sub.url, { token: connectionToken(`tags-${name}-rec`) });
      await connect(c);
      const s = c.newSubscription('tf:rec', { tagsFilter: leaf('k', 'eq', 'a') });
      const pubs = new EventLog(s, 'publication');
      const subscribed = new EventLog(s, 'subscribed');
      await subscribe(s);
      await publish('tf:rec', 1, { k: 'a' });
      await pubs.count(1);
      const disconnected = waitEvent(c, 'disconnected');
      c.disconnect();
      await disconnected;
      for (const [i, k] of ['b', 'a', 'b', 'a'].entries()) await publish('tf:rec', i + 2, { k });
      await connect(c);
      const back = (await subscribed.count(2))[1];
      assert.equal(back.recovered, true);
      await publish('tf:rec', 6, { k: 'a' });
      assert.deepEqual((await pubs.count(4)).map((p) => p.data.n), [1, 3, 5, 6]);
      c.disconnect();
    });
  });
}

// Memory engine, one node.
let memNode;
suite('memory', false, async () => {
  memNode = await startHerald(transportConfig({ channel: { namespaces: NAMESPACES } }));
  return [memNode, memNode];
});

// Two nodes on Redis.
const redisSkip = !redisAddr && !requireServices ? 'no Redis: HERALD_TEST_REDIS_ADDR is unset (scripts/services.sh env)' : false;
let redisNodes = [];
suite('2 nodes on Redis', redisSkip, async () => {
  assert.ok(redisAddr, 'HERALD_TEST_REDIS_ADDR must be set when HERALD_TEST_REQUIRE_SERVICES=1');
  const config = transportConfig({ engine: redisEngine(uniqueName('herald_tags_js')), channel: { namespaces: NAMESPACES } });
  redisNodes = await Promise.all([startHerald(config), startHerald(config)]);
  return redisNodes;
});

// Two nodes on PostgreSQL.
const pgSkip = !DSN && !requireServices ? 'HERALD_TEST_POSTGRES_DSN is not set: eval "$(scripts/services.sh env)"' : false;
let pgNodes = [];
let pgLock;
suite('2 nodes on PostgreSQL', pgSkip, async () => {
  assert.ok(DSN, 'HERALD_TEST_POSTGRES_DSN must be set when HERALD_TEST_REQUIRE_SERVICES=1');
  pgLock = await lockPostgres('tagsfilter.test.mjs 2 nodes on PostgreSQL');
  const config = transportConfig({ engine: { type: 'postgres', postgres: { dsn: DSN, schema: pgSchema } }, channel: { namespaces: NAMESPACES } });
  // The first node creates the schema; the second starts on it.
  pgNodes = [await startHerald(config)];
  pgNodes.push(await startHerald(config));
  return pgNodes;
});

after(async () => {
  await Promise.all([memNode, ...redisNodes, ...pgNodes].map((n) => n?.stop()));
  if (DSN && pgNodes.length > 0) {
    dropSchema(DSN, pgSchema);
  }
  pgLock?.release();
});
