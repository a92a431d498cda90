// Table change streams: row changes of a PostgreSQL table, published by
// herald.stream_table's trigger inside the writing transaction, reach
// centrifuge-js subscribers: inserts, updates, deletes, nothing from a
// rolled-back transaction, 10,000 rows of one transaction, and concurrent
// writers in commit order; a subscriber that was away recovers them.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { lockPostgres } from './lib/pglock.mjs';
import * as psql from './lib/psql.mjs';

const DSN = process.env.HERALD_TEST_POSTGRES_DSN;
const required = process.env.HERALD_TEST_REQUIRE_SERVICES === '1';
const skip = !DSN && !required ? 'HERALD_TEST_POSTGRES_DSN is not set: eval "$(scripts/services.sh env)"' : false;

const schema = `herald_tablestream_js_${randomBytes(5).toString('hex')}`;
let herald;
let pgLock;

/** sql and sqlAsync run statements on the tests' database (lib/psql.mjs). */
const sql = (statements) => psql.sql(DSN, statements);
const sqlAsync = (statements) => psql.sqlAsync(DSN, statements);

before(async () => {
  if (skip) return;
  assert.ok(DSN, 'HERALD_TEST_POSTGRES_DSN must be set when HERALD_TEST_REQUIRE_SERVICES is');
  pgLock = await lockPostgres('tablestream.test.mjs');
  herald = await startHerald({
    engine: { type: 'postgres', postgres: { dsn: DSN, schema } },
    channel: {
      namespaces: [
        { name: 'orders', history_size: 20000, history_ttl: '300s', force_recovery: true, allow_subscribe_for_client: true },
      ],
    },
  });
  sql(`CREATE TABLE ${schema}.orders (id bigserial PRIMARY KEY, customer int NOT NULL, item text, secret text);
       CREATE TABLE ${schema}.counter (n int NOT NULL); INSERT INTO ${schema}.counter VALUES (0);
       SELECT ${schema}.stream_table('${schema}.orders', 'orders:{customer}', ARRAY['id','customer','item'], 20000, '300 seconds');`);
});

after(async () => {
  await herald?.stop();
  if (DSN && !skip) {
    psql.dropSchema(DSN, schema);
  }
  pgLock?.release();
});

async function subscriber(t, channel) {
  const client = newClient(herald.url, { token: connectionToken(`u-${channel}`) });
  t.after(() => client.disconnect());
  await connect(client);
  const sub = client.newSubscription(channel);
  const pubs = new EventLog(sub, 'publication');
  await subscribe(sub);
  return { client, sub, pubs };
}

test('inserts, updates and deletes arrive; a rolled-back transaction sends nothing', { skip }, async (t) => {
  const { pubs } = await subscriber(t, 'orders:1');
  sql(`INSERT INTO ${schema}.orders (id, customer, item, secret) VALUES (1, 1, 'tea', 'hidden')`);
  sql(`UPDATE ${schema}.orders SET item = 'green tea' WHERE id = 1`);
  assert.throws(() => sql(`INSERT INTO ${schema}.orders (id, customer, item) VALUES (2, 1, 'never'); SELECT 1/0`));
  sql(`DELETE FROM ${schema}.orders WHERE id = 1`);
  const got = (await pubs.count(3)).map((e) => e.data);
  assert.deepEqual(got, [
    { op: 'insert', new: { id: 1, customer: 1, item: 'tea' } },
    { op: 'update', old: { id: 1, customer: 1, item: 'tea' }, new: { id: 1, customer: 1, item: 'green tea' } },
    { op: 'delete', old: { id: 1, customer: 1, item: 'green tea' } },
  ]);
  assert.deepEqual(
    pubs.events.map((e) => e.offset),
    [1, 2, 3],
    'the rolled-back insert used no offset',
  );
});

test('10,000 rows of one transaction arrive, each once, each at its offset', { skip, timeout: 120_000 }, async (t) => {
  const { pubs } = await subscriber(t, 'orders:2');
  sql(`INSERT INTO ${schema}.orders (customer, item) SELECT 2, g::text FROM generate_series(1, 10000) g`);
  const got = await pubs.count(10000, 60_000);
  // Herald sends them in offset order, several per frame. centrifuge-js
  // 5.7 may emit the publications of frames that arrive within one
  // event-loop tick interleaved (its _dataReceived chains every such frame
  // on the same promise), so the events are checked by offset: each of
  // 1..10000 exactly once, carrying the row inserted at that position.
  const byOffset = new Map(got.map((e) => [e.offset, e.data.new.item]));
  assert.equal(byOffset.size, 10000, 'every offset once');
  for (let i = 1; i <= 10000; i++) assert.equal(byOffset.get(i), String(i), `offset ${i}`);
});

test('concurrent writers to one channel arrive in commit order', { skip }, async (t) => {
  const { pubs } = await subscriber(t, 'orders:3');
  // Each transaction takes the next number from a row it keeps locked to
  // its commit, so numbers follow commit order.
  const write = `WITH n AS (UPDATE ${schema}.counter SET n = n + 1 RETURNING n)
                 INSERT INTO ${schema}.orders (customer, item) SELECT 3, n::text FROM n`;
  const writers = Array.from({ length: 4 }, async () => {
    for (let i = 0; i < 25; i++) await sqlAsync(write);
  });
  await Promise.all(writers);
  const got = await pubs.count(100, 30_000);
  // Offsets follow commit order: offset i carries the i-th commit's row
  // (by offset, as above: centrifuge-js may interleave frames' events).
  const byOffset = new Map(got.map((e) => [e.offset, Number(e.data.new.item)]));
  for (let i = 1; i <= 100; i++) assert.equal(byOffset.get(i), i, `offset ${i}`);
});

test('a subscriber that was away recovers the changes it missed', { skip }, async (t) => {
  const { client, sub, pubs } = await subscriber(t, 'orders:4');
  sql(`INSERT INTO ${schema}.orders (customer, item) VALUES (4, 'before')`);
  await pubs.count(1);
  const gone = waitEvent(client, 'disconnected');
  client.disconnect();
  await gone;
  sql(`INSERT INTO ${schema}.orders (customer, item) SELECT 4, 'missed ' || g FROM generate_series(1, 3) g`);
  const back = waitEvent(sub, 'subscribed', { timeoutMs: 15_000 });
  await connect(client);
  const ctx = await back;
  assert.equal(ctx.recovered, true);
  const got = await pubs.count(4);
  assert.deepEqual(
    got.map((e) => e.data.new.item),
    ['before', 'missed 1', 'missed 2', 'missed 3'],
  );
});
