// Token expiry and refresh: the server closes what is not refreshed, and the
// SDK keeps a connection and a private subscription alive past their first
// token's expiry by fetching fresh tokens through getToken.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { EventLog, connect, newClient, subscribe } from './lib/events.mjs';
import { connectionToken, startHerald, subscriptionToken } from './lib/herald.mjs';
import { RawClient } from './lib/raw.mjs';
import { TokenSource } from './lib/tokensource.mjs';

// Short tokens and close delays keep each test to a few seconds; the
// delays are whole seconds because the server counts expiry in seconds.
// The ttl a client is told is rounded down to whole seconds and the client
// refreshes after exactly that, so a refresh may come up to a second after
// the real expiry: the close delay must leave more than that second.
const TTL_SECONDS = 3;
const CLOSE_DELAY_SECONDS = 2;
const WAIT_MS = 15_000;
const TOKEN_TIMING = { closeDelaySeconds: CLOSE_DELAY_SECONDS, waitMs: WAIT_MS };

let herald;

before(async () => {
  herald = await startHerald({
    client: {
      expired_close_delay: `${CLOSE_DELAY_SECONDS}s`,
      expired_sub_close_delay: `${CLOSE_DELAY_SECONDS}s`,
    },
    channel: {
      namespaces: [{ name: 'priv', allow_publish_for_subscriber: true }],
    },
  });
});

after(async () => {
  await herald?.stop();
});

/**
 * publisherOn connects a second client subscribed to channel with a long
 * token, whose publications show that the tested client still receives:
 * the tested client itself might be mid-refresh, with an expired token,
 * exactly when a test sends a command.
 */
async function publisherOn(t, channel) {
  const client = newClient(herald.url, { token: connectionToken('publisher') });
  t.after(() => client.disconnect());
  await connect(client);
  const sub = client.newSubscription(channel, { token: subscriptionToken('publisher', channel) });
  await subscribe(sub);
  return sub;
}

/** recordDrops records the events that would mean a dropped connection or subscription. */
function recordDrops(emitter, names) {
  const drops = [];
  for (const name of names) emitter.on(name, (ctx) => drops.push({ name, code: ctx.code, reason: ctx.reason }));
  return drops;
}

// Each test waits out token lifetimes; they share nothing, so run them at once.
describe('token expiry and refresh', { concurrency: true }, () => {
  test('the server closes a connection whose token expired unrefreshed (3005)', async (t) => {
    const raw = await RawClient.open(herald.url);
    t.after(() => raw.close());
    const reply = await raw.call({ connect: { token: connectionToken('lazy', { ttlSeconds: 2 }) } });
    assert.equal(reply.connect?.expires, true, `connect reply ${JSON.stringify(reply)}`);
    assert.ok(reply.connect.ttl > 0 && reply.connect.ttl <= 2, `ttl ${reply.connect.ttl}`);
    const { code } = await raw.closedWithin(WAIT_MS);
    assert.equal(code, 3005);
  });

  test('the server unsubscribes a subscription whose token expired unrefreshed (2501)', async (t) => {
    const raw = await RawClient.open(herald.url);
    t.after(() => raw.close());
    const channel = '$priv:lazy';
    await raw.call({ connect: { token: connectionToken('lazy') } });
    const reply = await raw.call({ subscribe: { channel, token: subscriptionToken('lazy', channel, { ttlSeconds: 2 }) } });
    assert.equal(reply.subscribe?.expires, true, `subscribe reply ${JSON.stringify(reply)}`);
    const [push] = await raw.pushes.count(1, WAIT_MS);
    assert.equal(push.channel, channel);
    assert.equal(push.unsubscribe?.code, 2501, `push ${JSON.stringify(push)}`);
  });

  test('getToken refreshes the connection token and the client stays connected', async (t) => {
    const channel = '$priv:conn-refresh';
    const tokens = new TokenSource(() => connectionToken('refresher', { ttlSeconds: TTL_SECONDS }), TOKEN_TIMING);
    const client = newClient(herald.url, { getToken: tokens.get });
    t.after(() => client.disconnect());
    await connect(client);
    const sub = client.newSubscription(channel, { token: subscriptionToken('refresher', channel) });
    const pubs = new EventLog(sub, 'publication');
    await subscribe(sub);
    const drops = recordDrops(client, ['disconnected', 'connecting']);
    const publisher = await publisherOn(t, channel);

    const calls = await tokens.pastFirstExpiry();
    assert.ok(calls >= 2, `getToken called ${calls} times`);
    assert.deepEqual(drops, [], 'the connection never dropped');
    assert.equal(client.state, 'connected');

    // The connection still delivers.
    await publisher.publish({ alive: true });
    const [pub] = await pubs.count(1);
    assert.deepEqual(pub.data, { alive: true });
  });

  test('getToken refreshes a private subscription token and the subscription stays', async (t) => {
    const channel = '$priv:room';
    const client = newClient(herald.url, { token: connectionToken('member') });
    t.after(() => client.disconnect());
    await connect(client);

    const tokens = new TokenSource(() => subscriptionToken('member', channel, { ttlSeconds: TTL_SECONDS }), TOKEN_TIMING);
    const sub = client.newSubscription(channel, { getToken: tokens.get });
    const pubs = new EventLog(sub, 'publication');
    const ctx = await subscribe(sub);
    const drops = recordDrops(sub, ['unsubscribed', 'subscribing']);
    assert.equal(ctx.channel, channel);
    const publisher = await publisherOn(t, channel);

    const calls = await tokens.pastFirstExpiry();
    assert.ok(calls >= 2, `getToken called ${calls} times`);
    assert.deepEqual(drops, [], 'the subscription never dropped');
    assert.equal(sub.state, 'subscribed');

    await publisher.publish({ still: 'here' });
    const [pub] = await pubs.count(1);
    assert.deepEqual(pub.data, { still: 'here' });
  });
});
