// Map subscriptions on the PostgreSQL engine, across two nodes: keys set
// through one node reach a subscriber of the other and a late subscriber's
// snapshot; herald.map_publish and herald.map_remove in an application's
// transaction are delivered if and only if it commits; the state outlives
// every node (persistent mode); a table made a live map with
// herald.map_table reaches a subscriber that joins while writers change
// it with every row exactly once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import { EventLog, connect, newClient, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { lockPostgres } from './lib/pglock.mjs';
import * as psql from './lib/psql.mjs';

const DSN = process.env.HERALD_TEST_POSTGRES_DSN;
const required = process.env.HERALD_TEST_REQUIRE_SERVICES === '1';
const skip = !DSN && !required ? 'HERALD_TEST_POSTGRES_DSN is not set: eval "$(scripts/services.sh env)"' : false;

const schema = `herald_map_js_${randomBytes(5).toString('hex')}`;
const config = {
  engine: { type: 'postgres', postgres: { dsn: DSN, schema } },
  channel: {
    namespaces: [
      {
        name: 'board',
        subscription_type: 'map',
        allow_subscribe_for_client: true,
        map: { mode: 'persistent', allow_publish_for_client: true, allow_remove_for_client: true },
      },
    ],
  },
};
let nodeA;
let nodeB;
let pgLock;
const clients = [];

/** sql and sqlAsync run statements on the tests' database (lib/psql.mjs). */
const sql = (statements) => psql.sql(DSN, statements);
const sqlAsync = (statements) => psql.sqlAsync(DSN, statements);

before(async () => {
  if (skip) return;
  assert.ok(DSN, 'HERALD_TEST_POSTGRES_DSN must be set when HERALD_TEST_REQUIRE_SERVICES is');
  pgLock = await lockPostgres('map-postgres.test.mjs');
  // One node first, so that the schema is made once.
  nodeA = await startHerald(config);
  nodeB = await startHerald(config);
});

after(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all([nodeA?.stop(), nodeB?.stop()]);
  if (DSN && !skip) {
    psql.dropSchema(DSN, schema);
  }
  pgLock?.release();
});

async function client(node, user) {
  const c = newClient(node.url, { token: connectionToken(user) });
  clients.push(c);
  await connect(c);
  return c;
}

async function synced(node, channel) {
  const c = await client(node, 'reader');
  const sub = c.newMapSubscription(channel, { pageSize: 100 });
  const updates = new EventLog(sub, 'update');
  const sync = waitEvent(sub, 'sync');
  sub.subscribe();
  const { entries } = await sync;
  return { sub, updates, entries: Object.fromEntries(entries.map((e) => [e.key, e.data])) };
}

test('keys set through one node reach the other node live and in a late snapshot', { skip }, async () => {
  const writer = await client(nodeA, 'writer');
  const live = await synced(nodeB, 'board:two');
  for (let i = 0; i < 150; i++) {
    await writer.mapPublish('board:two', `k${String(i).padStart(3, '0')}`, { v: i });
  }
  await writer.mapRemove('board:two', 'k000');
  const got = await live.updates.count(151);
  assert.equal(got[150].key, 'k000');
  assert.equal(got[150].removed, true);
  const late = await synced(nodeB, 'board:two');
  assert.equal(Object.keys(late.entries).length, 149);
  assert.deepEqual(late.entries.k149, { v: 149 });
});

test('map_publish and map_remove from SQL are delivered if and only if the transaction commits', { skip }, async () => {
  const a = await synced(nodeA, 'board:sql');
  const b = await synced(nodeB, 'board:sql');
  assert.throws(() => sql(`SELECT ${schema}.map_publish('board:sql', 'lost', '{"v":0}'); SELECT 1/0;`));
  sql(`SELECT ${schema}.map_publish('board:sql', 'x', '{"v":1}');
       SELECT ${schema}.map_publish('board:sql', 'y', '{"v":2}');
       SELECT ${schema}.map_remove('board:sql', 'x');`);
  for (const s of [a, b]) {
    const got = await s.updates.count(3);
    assert.deepEqual(got.map((u) => [u.key, u.removed === true]), [['x', false], ['y', false], ['x', true]]);
  }
  const late = await synced(nodeB, 'board:sql');
  assert.deepEqual(late.entries, { y: { v: 2 } });
});

test('the state of a persistent map outlives every node', { skip }, async () => {
  const writer = await client(nodeA, 'writer');
  await writer.mapPublish('board:durable', 'kept', { v: 'kept' });
  await Promise.all([nodeA.stop(), nodeB.stop()]);
  nodeA = await startHerald(config);
  nodeB = await startHerald(config);
  const late = await synced(nodeB, 'board:durable');
  assert.deepEqual(late.entries, { kept: { v: 'kept' } });
});

test('a table as a live map: a subscriber joining while writers change it gets every row exactly once', { skip }, async () => {
  sql(`CREATE TABLE ${schema}.cards (id int PRIMARY KEY, board int NOT NULL, title text, secret text);
       INSERT INTO ${schema}.cards SELECT i, 7, 'card ' || i, 's' FROM generate_series(1, 500) i;
       SELECT ${schema}.map_table('${schema}.cards', 'board:{board}', 'id', ARRAY['title']);`);
  // Writers run while the subscriber reads its snapshot (5 pages of 100).
  const writers = (async () => {
    for (let i = 0; i < 40; i++) {
      await sqlAsync(`UPDATE ${schema}.cards SET title = 'edited ${i}' WHERE id = ${1 + ((i * 37) % 500)};
                      INSERT INTO ${schema}.cards VALUES (${1000 + i}, 7, 'added ${i}', 's');
                      DELETE FROM ${schema}.cards WHERE id = ${500 - i};`);
    }
  })();
  const c = await client(nodeB, 'reader');
  const sub = c.newMapSubscription('board:7', { pageSize: 100 });
  const state = new Map();
  let syncs = 0;
  sub.on('sync', (ctx) => {
    syncs++;
    state.clear();
    for (const e of ctx.entries) {
      assert.ok(!state.has(e.key), `key ${e.key} twice in the snapshot`);
      state.set(e.key, e.data.title);
    }
  });
  sub.on('update', (u) => {
    if (u.removed) state.delete(u.key);
    else state.set(u.key, u.data.title);
  });
  const synced = waitEvent(sub, 'sync');
  sub.subscribe();
  await synced;
  await writers;
  // A marker change after the writers: once it is in, so is everything before it.
  const marker = waitEvent(sub, 'update', { filter: (u) => u.key === '1' && u.data?.title === 'marker' });
  sql(`UPDATE ${schema}.cards SET title = 'marker' WHERE id = 1`);
  await marker;
  const rows = JSON.parse(sql(`COPY (SELECT coalesce(json_object_agg(id, title), '{}') FROM ${schema}.cards WHERE board = 7) TO STDOUT`));
  assert.equal(syncs, 1);
  assert.equal(state.size, Object.keys(rows).length);
  for (const [id, title] of Object.entries(rows)) {
    assert.equal(state.get(id), title, `row ${id}`);
  }
});
