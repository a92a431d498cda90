// Malformed input from raw connections closes those connections and
// nothing else: a well-behaved centrifuge client on the same server keeps
// its connection, its subscription and its publications.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';

import { EventLog, connect, newClient, subscribe } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { RawClient } from './lib/raw.mjs';

let herald;

before(async () => {
  herald = await startHerald({
    websocket: { message_size_limit: 65536 },
    channel: {
      without_namespace: { allow_subscribe_for_client: true, allow_publish_for_subscriber: true },
    },
  });
});

after(async () => {
  await herald?.stop();
});

const connectCmd = () => JSON.stringify({ id: 1, connect: { token: connectionToken('mallory') } });

// Each case sends its frames on a fresh connection; `code` is the close
// code the server must answer with (3501 bad request, 1009 too big).
const wsCases = [
  { name: 'text that is not JSON', frames: ['not json{'], code: 3501 },
  { name: 'binary garbage', frames: [Buffer.from([0xff, 0x00, 0x13, 0x37, 0x42])], code: 3501 },
  { name: 'JSON null', frames: ['null'], code: 3501 },
  { name: 'a command with fields of the wrong type', frames: ['{"id":"x","connect":{"token":5}}'], code: 3501 },
  { name: 'a command before connect', frames: ['{"id":1,"subscribe":{"channel":"news"}}'], code: 3501 },
  { name: 'an unknown command after connect', frames: [connectCmd(), '{"id":8,"foo":{}}'], code: 3501 },
  { name: 'a publish without an id after connect', frames: [connectCmd(), '{"publish":{"channel":"news","data":{}}}'], code: 3501 },
  { name: 'deeply nested JSON', frames: ['['.repeat(60_000)], code: 3501 },
  { name: 'invalid UTF-8 in a text frame', frames: [Buffer.from([0x7b, 0xc3, 0x28, 0x7d])], text: true, code: 3501 },
  { name: 'a frame over message_size_limit', frames: [`{"id":1,"connect":{"token":"${'a'.repeat(200_000)}"}}`], code: 1009 },
];

/** rawTCP opens a plain socket, writes data, and resolves when the server closes it. */
function rawTCP(port, data) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: '127.0.0.1', port }, () => sock.end(data));
    let reply = '';
    sock.on('data', (chunk) => {
      reply += chunk.toString();
    });
    sock.on('error', reject);
    sock.on('close', () => resolve(reply));
  });
}

test('bad input closes only the offending connections', async (t) => {
  const alice = newClient(herald.url, { token: connectionToken('alice') });
  const bob = newClient(herald.url, { token: connectionToken('bob') });
  t.after(() => {
    alice.disconnect();
    bob.disconnect();
  });
  await Promise.all([connect(alice), connect(bob)]);
  const aliceSub = alice.newSubscription('news');
  const bobSub = bob.newSubscription('news');
  const received = new EventLog(bobSub, 'publication');
  await Promise.all([subscribe(aliceSub), subscribe(bobSub)]);
  const drops = [];
  for (const c of [alice, bob]) c.on('disconnected', (ctx) => drops.push(ctx));
  for (const s of [aliceSub, bobSub]) s.on('unsubscribed', (ctx) => drops.push(ctx)).on('subscribing', (ctx) => drops.push(ctx));

  await aliceSub.publish({ n: 1 });
  await received.count(1);

  await t.test('WebSocket frames', async (t) => {
    for (const c of wsCases) {
      await t.test(c.name, async () => {
        const raw = await RawClient.open(herald.url);
        try {
          for (const frame of c.frames) raw.ws.send(frame, c.text ? { binary: false } : {});
          const { code, reason } = await raw.closedWithin();
          assert.equal(code, c.code, `closed with ${code} ${reason}`);
        } finally {
          raw.close();
        }
      });
    }
  });

  await t.test('HTTP and TCP noise', async () => {
    const junk = await rawTCP(herald.port, 'GARBAGE\r\n\r\n');
    assert.doesNotMatch(junk, /^HTTP\/1\.1 101/, 'no upgrade for junk');
    const plain = await rawTCP(herald.port, 'GET /connection/websocket HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(plain, /^HTTP\/1\.1 [45]\d\d/, 'a GET without upgrade headers is refused');
    // A handshake cut off in the middle.
    await rawTCP(herald.port, 'GET /connection/websocket HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n');
    // A WebSocket that vanishes without a close frame.
    const vanishing = await RawClient.open(herald.url);
    vanishing.ws.send(connectCmd());
    vanishing.close();
  });

  await t.test('the well-behaved clients are undisturbed', async () => {
    await aliceSub.publish({ n: 2 });
    const [, second] = await received.count(2);
    assert.deepEqual(second.data, { n: 2 });
    assert.deepEqual(drops, [], 'no disconnect or unsubscribe happened');
    assert.equal(alice.state, 'connected');
    assert.equal(bob.state, 'connected');
    // And a new client still gets in and receives.
    const carol = newClient(herald.url, { token: connectionToken('carol') });
    try {
      await connect(carol);
      const carolSub = carol.newSubscription('news');
      const carolGot = new EventLog(carolSub, 'publication');
      await subscribe(carolSub);
      await aliceSub.publish({ n: 3 });
      const [pub] = await carolGot.count(1);
      assert.deepEqual(pub.data, { n: 3 });
    } finally {
      carol.disconnect();
    }
  });
});

test('a server that saw bad input still accepts and serves new connections', async (t) => {
  const raw = await RawClient.open(herald.url);
  raw.send('not json{');
  await raw.closedWithin();
  const client = newClient(herald.url, { token: connectionToken('dave') });
  t.after(() => client.disconnect());
  await connect(client);
  const sub = client.newSubscription('after-bad');
  const pubs = new EventLog(sub, 'publication');
  await subscribe(sub);
  await sub.publish({ ok: true });
  const [pub] = await pubs.count(1);
  assert.deepEqual(pub.data, { ok: true });
});
