// Connecting with a JWT, subscribing, and publishing between two clients.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';

let herald;

before(async () => {
  herald = await startHerald({
    channel: {
      without_namespace: { allow_subscribe_for_client: true, allow_publish_for_subscriber: true },
    },
  });
});

after(async () => {
  await herald?.stop();
});

test('a client connects with a token given up front', async (t) => {
  const client = newClient(herald.url, { token: connectionToken('alice') });
  t.after(() => client.disconnect());
  const ctx = await connect(client);
  assert.equal(client.state, 'connected');
  assert.ok(ctx.client, 'the connect reply names the client id');
});

test('a client connects with a token from getToken', async (t) => {
  let calls = 0;
  const client = newClient(herald.url, {
    getToken: async () => {
      calls++;
      return connectionToken('bob');
    },
  });
  t.after(() => client.disconnect());
  await connect(client);
  assert.equal(calls, 1);
});

test('a bad token is refused and the client does not connect', async (t) => {
  const client = newClient(herald.url, { token: 'not-a-jwt' });
  t.after(() => client.disconnect());
  const disconnected = waitEvent(client, 'disconnected');
  client.connect();
  const ctx = await disconnected;
  // 3500 invalid token: a terminal code, the SDK does not reconnect.
  assert.equal(ctx.code, 3500, `disconnect code ${ctx.code} (${ctx.reason})`);
  assert.equal(client.state, 'disconnected');
});

test('a publication from one client reaches another with data and publisher info', async (t) => {
  const alice = newClient(herald.url, { token: connectionToken('alice') });
  const bob = newClient(herald.url, { token: connectionToken('bob') });
  t.after(() => {
    alice.disconnect();
    bob.disconnect();
  });
  await Promise.all([connect(alice), connect(bob)]);

  const channel = 'news';
  const bobSub = bob.newSubscription(channel);
  const received = new EventLog(bobSub, 'publication');
  await subscribe(bobSub);
  const aliceSub = alice.newSubscription(channel);
  await subscribe(aliceSub);

  await aliceSub.publish({ text: 'hello', n: 1 });
  await aliceSub.publish({ text: 'world', n: 2 });

  const [first, second] = await received.count(2);
  assert.equal(first.channel, channel);
  assert.deepEqual(first.data, { text: 'hello', n: 1 });
  assert.deepEqual(second.data, { text: 'world', n: 2 });
  assert.equal(first.info?.user, 'alice', 'info.user names the publisher');
  assert.ok(first.info?.client, 'info.client names the publishing connection');
});

test('a client that is not subscribed does not receive publications', async (t) => {
  const alice = newClient(herald.url, { token: connectionToken('alice') });
  const carol = newClient(herald.url, { token: connectionToken('carol') });
  t.after(() => {
    alice.disconnect();
    carol.disconnect();
  });
  await Promise.all([connect(alice), connect(carol)]);
  const carolOther = carol.newSubscription('other');
  const carolLog = new EventLog(carolOther, 'publication');
  await subscribe(carolOther);
  const carolNews = carol.newSubscription('news-2');
  const carolNewsLog = new EventLog(carolNews, 'publication');
  await subscribe(carolNews);

  const aliceSub = alice.newSubscription('other-2');
  await subscribe(aliceSub);
  await aliceSub.publish({ n: 1 });
  // A publication carol does receive, sent after the one she must not:
  // once it arrives, the first would have arrived too.
  const aliceNews = alice.newSubscription('news-2');
  await subscribe(aliceNews);
  await aliceNews.publish({ marker: true });
  await carolNewsLog.count(1);
  assert.equal(carolLog.events.length, 0);
});
