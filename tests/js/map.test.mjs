// Map subscriptions with centrifuge-js 5.8's newMapSubscription: the
// snapshot a late subscriber gets (over more keys than a page), updates
// and removals, recovery after a reconnect, key TTL, and bad input.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { EventLog, connect, newClient, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';

let herald;
const clients = [];

before(async () => {
  herald = await startHerald({
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
          map: { mode: 'ephemeral', key_ttl: '1s', allow_publish_for_subscriber: true, client_key: 'client_id' },
        },
        {
          name: 'game',
          allow_subscribe_for_client: true,
          map_clients_presence_channel_prefix: 'clients:',
          map_users_presence_channel_prefix: 'users:',
        },
        { name: 'clients', subscription_type: 'map_clients', allow_subscribe_for_client: true, map: { mode: 'recoverable', key_ttl: '60s' } },
        { name: 'users', subscription_type: 'map_users', allow_subscribe_for_client: true, map: { mode: 'recoverable', key_ttl: '60s' } },
      ],
    },
  });
});

after(async () => {
  for (const c of clients) c.disconnect();
  await herald?.stop();
});

async function client(user) {
  const c = newClient(herald.url, { token: connectionToken(user) });
  clients.push(c);
  await connect(c);
  return c;
}

/** mapOf turns sync entries into a plain object key → data. */
function mapOf(entries) {
  return Object.fromEntries(entries.map((e) => [e.key, e.data]));
}

test('a late subscriber gets every key as its snapshot, over several pages, then updates and removals', async () => {
  const writer = await client('writer');
  for (let i = 0; i < 250; i++) {
    await writer.mapPublish('board:late', `k${String(i).padStart(3, '0')}`, { v: i });
  }
  const reader = await client('reader');
  const sub = reader.newMapSubscription('board:late', { pageSize: 100 });
  const updates = new EventLog(sub, 'update');
  const synced = waitEvent(sub, 'sync');
  sub.subscribe();
  const { entries } = await synced;
  assert.equal(entries.length, 250);
  assert.deepEqual(mapOf(entries).k123, { v: 123 });

  await writer.mapPublish('board:late', 'k001', { v: 'changed' });
  await writer.mapRemove('board:late', 'k002');
  const [changed, removed] = await updates.count(2);
  assert.equal(changed.key, 'k001');
  assert.deepEqual(changed.data, { v: 'changed' });
  assert.equal(changed.info?.user, 'writer');
  assert.equal(removed.key, 'k002');
  assert.equal(removed.removed, true);
});

test('a subscriber that reconnects catches up from the change stream, without a new snapshot', async () => {
  const writer = await client('writer');
  await writer.mapPublish('board:recover', 'a', { v: 1 });
  const reader = await client('reader');
  const sub = reader.newMapSubscription('board:recover');
  const syncs = new EventLog(sub, 'sync');
  const updates = new EventLog(sub, 'update');
  sub.subscribe();
  await syncs.count(1);

  reader.disconnect();
  await writer.mapPublish('board:recover', 'b', { v: 2 });
  await writer.mapRemove('board:recover', 'a');
  const resubscribed = waitEvent(sub, 'subscribed');
  reader.connect();
  const ctx = await resubscribed;
  assert.equal(ctx.recovered, true, 'the subscription recovered');
  const got = await updates.count(2);
  assert.deepEqual(got.map((u) => [u.key, u.removed === true]), [['b', false], ['a', true]]);
  assert.equal(syncs.events.length, 1, 'no second snapshot after a recovery');
});

test('a key expires after its TTL and subscribers see the removal', async () => {
  const c = await client('mover');
  const sub = c.newMapSubscription('cursors:room');
  const updates = new EventLog(sub, 'update');
  const synced = waitEvent(sub, 'sync');
  sub.subscribe();
  await synced;
  await sub.publish('ignored: the key is the client id', { x: 1, y: 2 });
  const [set, expired] = await updates.count(2);
  assert.equal(set.key, c._client, 'client_key: the key is the connection id');
  assert.equal(expired.key, set.key);
  assert.equal(expired.removed, true);
});

test('bad input gets the protocol error and leaves the connection working', async () => {
  const c = await client('bad');
  await assert.rejects(c.mapPublish('board:bad', 'x'.repeat(2000), { v: 1 }), (err) => err.code === 107);
  // A refused subscribe ends the subscription with the error's code.
  const sub = c.newMapSubscription('board:bad', { pageSize: 5000 });
  const failed = waitEvent(sub, 'unsubscribed');
  sub.subscribe();
  assert.equal((await failed).code, 107, 'a page above max_page_size');
  // A stream subscription to a map channel is refused too.
  const plain = c.newSubscription('board:plain');
  const refused = waitEvent(plain, 'unsubscribed');
  plain.subscribe();
  assert.equal((await refused).code, 107);
  await c.mapPublish('board:bad', 'fine', { v: 1 });
});

test('presence as a map: newMapClientsSubscription and newMapUsersSubscription follow who is in a channel', async () => {
  const watcher = await client('watcher');
  const clientsSub = watcher.newMapClientsSubscription('clients:game:lobby');
  const usersSub = watcher.newMapUsersSubscription('users:game:lobby');
  const clientUpdates = new EventLog(clientsSub, 'update');
  const userUpdates = new EventLog(usersSub, 'update');
  const synced = Promise.all([waitEvent(clientsSub, 'sync'), waitEvent(usersSub, 'sync')]);
  clientsSub.subscribe();
  usersSub.subscribe();
  await synced;

  const player = await client('player');
  const sub = player.newSubscription('game:lobby');
  const subscribed = waitEvent(sub, 'subscribed');
  sub.subscribe();
  await subscribed;
  const [joined] = await clientUpdates.count(1);
  assert.equal(joined.key, player._client);
  assert.equal(joined.info?.user, 'player');
  const [user] = await userUpdates.count(1);
  assert.equal(user.key, 'player', 'map_users: one key per user');

  sub.unsubscribe();
  const [, left] = await clientUpdates.count(2);
  assert.equal(left.key, player._client);
  assert.equal(left.removed, true);
});
