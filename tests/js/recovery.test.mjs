// Recovery: a subscriber that was away gets exactly the publications it
// missed, in order, and is told that the gap was recovered.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { CuttableProxy } from './lib/proxy.mjs';

const MISSED = 5;
const API_KEY = 'recovery-test-api-key';

let herald;
let publisher;

before(async () => {
  herald = await startHerald({
    http_api: { key: API_KEY },
    channel: {
      namespaces: [
        {
          name: 'rec',
          history_size: 100,
          history_ttl: '300s',
          force_recovery: true,
          allow_subscribe_for_client: true,
          allow_publish_for_client: true,
        },
        // History, but no recovery: a reconnect starts from the present.
        {
          name: 'norec',
          history_size: 100,
          history_ttl: '300s',
          allow_subscribe_for_client: true,
          allow_publish_for_client: true,
        },
      ],
    },
  });
  publisher = newClient(herald.url, { token: connectionToken('publisher') });
  await connect(publisher);
});

after(async () => {
  publisher?.disconnect();
  await herald?.stop();
});

async function publishRange(channel, from, to) {
  for (let n = from; n <= to; n++) {
    await publisher.publish(channel, { n });
  }
}

/**
 * serverLetGo waits until the server has no subscriber of channel left.
 * centrifuge-js reports 'disconnected' as soon as disconnect() is called,
 * before the server has read the close, and it still hands the
 * subscription a publication that was on its way: one published in
 * between would arrive although the client had "left".
 */
async function serverLetGo(channel) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${herald.port}/api/channels`, {
      method: 'POST',
      headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ pattern: channel }),
    });
    const body = await res.json();
    assert.ok(body.result, `channels API: ${JSON.stringify(body)}`);
    if (!body.result.channels?.[channel]) return;
    assert.ok(Date.now() < deadline, `the server still has a subscriber of ${channel} after 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * awayAndBack makes a subscriber on channel, receives one publication,
 * lets `goAway` take it offline, publishes MISSED more, lets `comeBack`
 * reconnect it, and returns the resubscription context and what arrived
 * after it, once a final marker publication has arrived.
 */
async function awayAndBack(subscriber, channel, goAway, comeBack) {
  const sub = subscriber.newSubscription(channel);
  const pubs = new EventLog(sub, 'publication');
  const first = await subscribe(sub);
  await publishRange(channel, 1, 1);
  await pubs.count(1);

  await goAway();
  await publishRange(channel, 2, 1 + MISSED);

  const resubscribed = waitEvent(sub, 'subscribed', { timeoutMs: 15_000 });
  await comeBack();
  const ctx = await resubscribed;
  // A marker sent after the reconnect: once it is in, every replayed
  // publication (and any duplicate) is in too.
  const marker = 2 + MISSED;
  await publishRange(channel, marker, marker);
  const seen = await waitForData(pubs, marker);
  return { first, ctx, afterReconnect: seen.slice(1) };
}

/** waitForData waits until a publication with data.n === n is logged and returns all logged ones. */
async function waitForData(log, n) {
  for (let count = 1; ; count++) {
    const events = await log.count(count, 15_000);
    if (events[count - 1].data.n === n) return log.events;
  }
}

const ns = (pubs) => pubs.map((p) => p.data.n);
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('after disconnect() and connect() the subscription recovers exactly the missed publications', async (t) => {
  const channel = 'rec:manual';
  const subscriber = newClient(herald.url, { token: connectionToken('subscriber') });
  t.after(() => subscriber.disconnect());
  await connect(subscriber);

  const { first, ctx, afterReconnect } = await awayAndBack(
    subscriber,
    channel,
    async () => {
      const gone = waitEvent(subscriber, 'disconnected');
      subscriber.disconnect();
      await gone;
      await serverLetGo(channel);
    },
    () => connect(subscriber),
  );
  assert.equal(first.recoverable, true, 'force_recovery makes the subscription recoverable');
  assert.equal(ctx.wasRecovering, true);
  assert.equal(ctx.recovered, true);
  assert.deepEqual(ns(afterReconnect), range(2, 2 + MISSED));
  assert.deepEqual(
    afterReconnect.map((p) => p.offset),
    range(2, 2 + MISSED),
    'offsets continue the stream without gaps',
  );
});

test('after a dropped network the subscription recovers exactly the missed publications', async (t) => {
  const channel = 'rec:network';
  const proxy = await CuttableProxy.start(herald.port);
  const subscriber = newClient(proxy.url(), { token: connectionToken('subscriber') });
  t.after(async () => {
    subscriber.disconnect();
    await proxy.close();
  });
  await connect(subscriber);

  let dropped;
  const { ctx, afterReconnect } = await awayAndBack(
    subscriber,
    channel,
    async () => {
      const gone = waitEvent(subscriber, 'connecting');
      proxy.cut();
      dropped = await gone;
    },
    async () => {
      const back = waitEvent(subscriber, 'connected', { timeoutMs: 15_000 });
      proxy.restore();
      await back;
    },
  );
  assert.ok(dropped, 'the client noticed the drop and went back to connecting');
  assert.equal(ctx.wasRecovering, true);
  assert.equal(ctx.recovered, true);
  assert.deepEqual(ns(afterReconnect), range(2, 2 + MISSED));
});

test('without recovery the missed publications are not replayed', async (t) => {
  const channel = 'norec:manual';
  const subscriber = newClient(herald.url, { token: connectionToken('subscriber') });
  t.after(() => subscriber.disconnect());
  await connect(subscriber);

  const { ctx, afterReconnect } = await awayAndBack(
    subscriber,
    channel,
    async () => {
      const gone = waitEvent(subscriber, 'disconnected');
      subscriber.disconnect();
      await gone;
      await serverLetGo(channel);
    },
    () => connect(subscriber),
  );
  assert.equal(ctx.wasRecovering, false);
  assert.equal(ctx.recovered, false);
  assert.deepEqual(ns(afterReconnect), [2 + MISSED], 'only the publication sent after the return arrives');
});
