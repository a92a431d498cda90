// Presence, presence stats, and join/leave events.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';

let herald;

before(async () => {
  herald = await startHerald({
    channel: {
      namespaces: [
        {
          name: 'room',
          presence: true,
          join_leave: true,
          force_push_join_leave: true,
          allow_subscribe_for_client: true,
          allow_publish_for_subscriber: true,
          allow_presence_for_subscriber: true,
        },
        // Presence is kept, but clients may not read it.
        { name: 'closed', presence: true, allow_subscribe_for_client: true },
      ],
    },
  });
});

after(async () => {
  await herald?.stop();
});

/** connectAs connects a client for user and disconnects it after the test. */
async function connectAs(t, user) {
  const client = newClient(herald.url, { token: connectionToken(user, { info: { name: user.toUpperCase() } }) });
  t.after(() => client.disconnect());
  const ctx = await connect(client);
  return { client, id: ctx.client };
}

test('presence lists every subscriber with user, client and conn_info', async (t) => {
  const channel = 'room:presence';
  const alice = await connectAs(t, 'alice');
  const bob = await connectAs(t, 'bob');
  const aliceSub = alice.client.newSubscription(channel);
  const bobSub = bob.client.newSubscription(channel);
  await subscribe(aliceSub);
  await subscribe(bobSub);

  const { clients } = await aliceSub.presence();
  assert.deepEqual(Object.keys(clients).sort(), [alice.id, bob.id].sort());
  assert.equal(clients[alice.id].user, 'alice');
  assert.equal(clients[alice.id].client, alice.id);
  assert.deepEqual(clients[alice.id].connInfo, { name: 'ALICE' });
  assert.equal(clients[bob.id].user, 'bob');

  const stats = await bobSub.presenceStats();
  assert.equal(stats.numClients, 2);
  assert.equal(stats.numUsers, 2);
});

test('presence stats count users once however many connections they hold', async (t) => {
  const channel = 'room:stats';
  const conns = await Promise.all([connectAs(t, 'alice'), connectAs(t, 'alice'), connectAs(t, 'bob')]);
  const subs = conns.map(({ client }) => client.newSubscription(channel));
  await Promise.all(subs.map(subscribe));

  const stats = await subs[0].presenceStats();
  assert.deepEqual({ clients: stats.numClients, users: stats.numUsers }, { clients: 3, users: 2 });

  // Leaving is reflected too.
  const left = waitEvent(subs[0], 'leave', { filter: (ctx) => ctx.info.client === conns[2].id });
  subs[2].unsubscribe();
  await left;
  const after = await subs[0].presenceStats();
  assert.deepEqual({ clients: after.numClients, users: after.numUsers }, { clients: 2, users: 1 });
  const { clients } = await subs[0].presence();
  assert.equal(Object.keys(clients).length, 2);
  assert.ok(!(conns[2].id in clients), 'the client that left is no longer present');
});

test('presence without permission is refused with 103', async (t) => {
  const alice = await connectAs(t, 'alice');
  const sub = alice.client.newSubscription('closed:x');
  await subscribe(sub);
  await assert.rejects(sub.presence(), (err) => err.code === 103);
  await assert.rejects(sub.presenceStats(), (err) => err.code === 103);
});

test('subscribers see join and leave events of others', async (t) => {
  const channel = 'room:joinleave';
  const alice = await connectAs(t, 'alice');
  const aliceSub = alice.client.newSubscription(channel);
  const joins = new EventLog(aliceSub, 'join');
  const leaves = new EventLog(aliceSub, 'leave');
  await subscribe(aliceSub);

  const bob = await connectAs(t, 'bob');
  const bobSub = bob.client.newSubscription(channel);
  await subscribe(bobSub);

  const bobJoin = await waitFor(joins, (ctx) => ctx.info.client === bob.id);
  assert.equal(bobJoin.channel, channel);
  assert.equal(bobJoin.info.user, 'bob');
  assert.deepEqual(bobJoin.info.connInfo, { name: 'BOB' });

  // A disconnect leaves every channel, like an unsubscribe.
  bob.client.disconnect();
  const bobLeave = await waitFor(leaves, (ctx) => ctx.info.client === bob.id);
  assert.equal(bobLeave.info.user, 'bob');
  assert.equal(bobLeave.channel, channel);
});

/** waitFor resolves with the first logged event matching pred. */
async function waitFor(log, pred) {
  for (let n = 1; ; n++) {
    const events = await log.count(n);
    if (pred(events[n - 1])) return events[n - 1];
  }
}
