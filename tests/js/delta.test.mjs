// Delta compression: centrifuge-js subscribes with delta: 'fossil', the
// server sends the first publication in full and Fossil deltas after it,
// and the SDK hands the application the rebuilt data, in the JSON and the
// Protobuf builds, live and after recovery.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { Centrifuge as CentrifugeProtobuf } from 'centrifuge/build/protobuf';
import WebSocket from 'ws';

import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';

const COUNT = 10;

let herald;
let publisher;

before(async () => {
  const delta = { allowed_delta_types: ['fossil'], delta_publish: true, allow_subscribe_for_client: true, allow_publish_for_client: true };
  herald = await startHerald({
    channel: {
      namespaces: [
        { name: 'docs', ...delta },
        { name: 'docsrec', ...delta, history_size: 100, history_ttl: '300s', force_recovery: true },
        { name: 'nodelta', allow_subscribe_for_client: true, allow_publish_for_client: true },
        { name: 'fullpub', ...delta, delta_publish: false },
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

/** doc is a ~2 KB JSON document; from one seq to the next only one field changes. */
function doc(seq) {
  const items = Array.from({ length: 30 }, (_, i) => ({ id: i, name: `item number ${i}`, price: 100 + i + 0.25, tags: ['a', 'b', 'c'] }));
  return { seq, title: 'a document that changes one field at a time', items };
}

async function publishDocs(channel, from, to) {
  for (let seq = from; seq <= to; seq++) {
    await publisher.publish(channel, doc(seq));
  }
}

const builds = {
  json: (token) => newClient(herald.url, { token }),
  protobuf: (token) =>
    new CentrifugeProtobuf(herald.url, { websocket: WebSocket, minReconnectDelay: 100, maxReconnectDelay: 1000, token }),
};

/** dataOf decodes what the SDK hands over: an object over JSON, bytes over Protobuf. */
function dataOf(build, data) {
  return build === 'protobuf' ? JSON.parse(new TextDecoder().decode(data)) : data;
}

for (const build of Object.keys(builds)) {
  test(`${build}: a sequence of documents arrives rebuilt from deltas`, async (t) => {
    const channel = `docs:${build}`;
    const client = builds[build](connectionToken(`sub-${build}`));
    t.after(() => client.disconnect());
    await connect(client);
    const sub = client.newSubscription(channel, { delta: 'fossil' });
    const pubs = new EventLog(sub, 'publication');
    await subscribe(sub);
    await publishDocs(channel, 1, COUNT);
    const got = await pubs.count(COUNT);
    got.forEach((p, i) => assert.deepEqual(dataOf(build, p.data), doc(i + 1), `publication ${i + 1}`));
    const stats = sub.deltaStats();
    assert.equal(stats.numFullPayloads, 1, 'only the first publication in full');
    assert.equal(stats.numDeltaPayloads, COUNT - 1);
    assert.ok(
      stats.bytesReceived * 4 < stats.bytesDecoded,
      `deltas save most of the bytes: ${stats.bytesReceived} received for ${stats.bytesDecoded} decoded`,
    );
  });
}

test('json: delta asked where the namespace does not allow it gives full publications', async (t) => {
  const channel = 'nodelta:doc';
  const client = newClient(herald.url, { token: connectionToken('sub-nodelta') });
  t.after(() => client.disconnect());
  await connect(client);
  const sub = client.newSubscription(channel, { delta: 'fossil' });
  const pubs = new EventLog(sub, 'publication');
  await subscribe(sub);
  await publishDocs(channel, 1, 3);
  const got = await pubs.count(3);
  got.forEach((p, i) => assert.deepEqual(p.data, doc(i + 1)));
  assert.equal(sub.deltaStats().numDeltaPayloads, 0);
});

test('json: delta negotiated in a namespace without delta_publish gives full publications', async (t) => {
  const channel = 'fullpub:doc';
  const client = newClient(herald.url, { token: connectionToken('sub-fullpub') });
  t.after(() => client.disconnect());
  await connect(client);
  const sub = client.newSubscription(channel, { delta: 'fossil' });
  const pubs = new EventLog(sub, 'publication');
  await subscribe(sub);
  await publishDocs(channel, 1, 3);
  const got = await pubs.count(3);
  got.forEach((p, i) => assert.deepEqual(p.data, doc(i + 1)));
  const stats = sub.deltaStats();
  assert.equal(stats.numDeltaPayloads, 0, 'as in Centrifugo without delta_publish: no deltas');
  assert.equal(stats.numFullPayloads, 3);
});

for (const build of Object.keys(builds)) {
  test(`${build}: after recovery the missed documents and the live ones arrive rebuilt`, async (t) => {
    const channel = `docsrec:${build}`;
    const client = builds[build](connectionToken(`rec-${build}`));
    t.after(() => client.disconnect());
    await connect(client);
    const sub = client.newSubscription(channel, { delta: 'fossil' });
    const pubs = new EventLog(sub, 'publication');
    await subscribe(sub);
    await publishDocs(channel, 1, 2);
    await pubs.count(2);

    const gone = waitEvent(client, 'disconnected');
    client.disconnect();
    await gone;
    await publishDocs(channel, 3, 6);
    const resubscribed = waitEvent(sub, 'subscribed', { timeoutMs: 15_000 });
    await connect(client);
    const ctx = await resubscribed;
    assert.equal(ctx.recovered, true);
    await publishDocs(channel, 7, 8);
    const got = await pubs.count(8);
    got.forEach((p, i) => assert.deepEqual(dataOf(build, p.data), doc(i + 1), `publication ${i + 1}`));
    // Full: the first before the disconnect and the first recovered; the
    // rest, recovered and live, are deltas.
    const stats = sub.deltaStats();
    assert.equal(stats.numFullPayloads, 2);
    assert.equal(stats.numDeltaPayloads, 6);
  });
}
