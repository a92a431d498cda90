// Channel history: order, offsets, limit, reverse, since, and the errors.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { connect, newClient, subscribe } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';

let herald;
let client;

const readable = {
  allow_subscribe_for_client: true,
  allow_publish_for_subscriber: true,
  allow_history_for_subscriber: true,
};

before(async () => {
  herald = await startHerald({
    channel: {
      namespaces: [
        { name: 'hist', history_size: 100, history_ttl: '300s', ...readable },
        { name: 'short', history_size: 3, history_ttl: '300s', ...readable },
        { name: 'nohist', ...readable },
        { name: 'private', history_size: 100, history_ttl: '300s', allow_subscribe_for_client: true, allow_publish_for_subscriber: true },
      ],
    },
  });
  client = newClient(herald.url, { token: connectionToken('historian') });
  await connect(client);
});

after(async () => {
  client?.disconnect();
  await herald?.stop();
});

/** publishN subscribes to channel and publishes {n: 1..count} into it. */
async function publishN(channel, count) {
  const sub = client.newSubscription(channel);
  await subscribe(sub);
  for (let n = 1; n <= count; n++) {
    await sub.publish({ n });
  }
  return sub;
}

const ns = (pubs) => pubs.map((p) => p.data.n);
const offsets = (pubs) => pubs.map((p) => p.offset);

test('history returns the publications oldest first with consecutive offsets', async () => {
  const sub = await publishN('hist:order', 5);
  const res = await sub.history({ limit: 10 });
  assert.deepEqual(ns(res.publications), [1, 2, 3, 4, 5]);
  assert.deepEqual(offsets(res.publications), [1, 2, 3, 4, 5]);
  assert.equal(res.offset, 5, 'the result carries the top offset');
  assert.ok(res.epoch, 'the result carries the stream epoch');
  assert.equal(res.publications[0].info?.user, 'historian');
});

test('limit bounds the count from the oldest, and 0 returns only the position', async () => {
  const sub = await publishN('hist:limit', 5);
  const two = await sub.history({ limit: 2 });
  assert.deepEqual(offsets(two.publications), [1, 2]);
  assert.equal(two.offset, 5);

  const none = await sub.history({ limit: 0 });
  assert.deepEqual(none.publications, []);
  assert.equal(none.offset, 5);
  assert.equal(none.epoch, two.epoch);
});

test('reverse returns the newest first', async () => {
  const sub = await publishN('hist:reverse', 5);
  const res = await sub.history({ limit: 3, reverse: true });
  assert.deepEqual(offsets(res.publications), [5, 4, 3]);
  assert.deepEqual(ns(res.publications), [5, 4, 3]);
});

test('since is exclusive, forward and reverse', async () => {
  const sub = await publishN('hist:since', 6);
  const { epoch } = await sub.history({ limit: 0 });

  const forward = await sub.history({ limit: 10, since: { offset: 2, epoch } });
  assert.deepEqual(offsets(forward.publications), [3, 4, 5, 6]);

  const forwardLimited = await sub.history({ limit: 2, since: { offset: 2, epoch } });
  assert.deepEqual(offsets(forwardLimited.publications), [3, 4]);

  const backward = await sub.history({ limit: 10, since: { offset: 4, epoch }, reverse: true });
  assert.deepEqual(offsets(backward.publications), [3, 2, 1]);

  const atTop = await sub.history({ limit: 10, since: { offset: 6, epoch } });
  assert.deepEqual(atTop.publications, []);
});

test('since with another epoch is refused with 112', async () => {
  const sub = await publishN('hist:epoch', 2);
  await assert.rejects(sub.history({ limit: 10, since: { offset: 1, epoch: 'not-the-epoch' } }), (err) => err.code === 112);
});

test('the stream keeps only the last history_size publications', async () => {
  const sub = await publishN('short:cap', 5);
  const res = await sub.history({ limit: 10 });
  assert.deepEqual(offsets(res.publications), [3, 4, 5]);
  assert.equal(res.offset, 5);
});

test('history is refused with 108 where it is off and 103 without permission', async () => {
  const off = await publishN('nohist:x', 1);
  await assert.rejects(off.history({ limit: 10 }), (err) => err.code === 108);
  const denied = await publishN('private:x', 1);
  await assert.rejects(denied.history({ limit: 10 }), (err) => err.code === 103);
});
