// Shared poll subscriptions with centrifuge-js 5.8's newSharedPollSubscription:
// keys tracked with batches the application signs, polled by herald from a
// refresh backend written here to Centrifugo's documented HTTP shape
// ({channel, items: [{key, version}]} in, {result: {items: [{key, data,
// version, removed}]}} out), updates, a removal, untrack, and a version
// pushed at once through the server API's shared_poll_publish.
import assert from 'node:assert/strict';
import { createHmac, createHash } from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';

import { EventLog, connect, newClient, subscribe } from './lib/events.mjs';
import { connectionToken, freePort, startHerald } from './lib/herald.mjs';

const POLL_SECRET = 'shared-poll-js-test-secret-of-the-application';
const API_KEY = 'shared-poll-js-api-key';

/** items is the backend's data: key → {data, version, removed}. */
const items = new Map();
/** asked counts how often each key was asked. */
const asked = new Map();
let backend;
let herald;
const clients = [];

before(async () => {
  const port = await freePort();
  backend = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const { items: wanted = [] } = JSON.parse(body);
      const out = [];
      for (const { key, version = 0 } of wanted) {
        asked.set(key, (asked.get(key) ?? 0) + 1);
        const it = items.get(key);
        if (it && (it.removed || it.version > version)) {
          out.push({ key, data: it.data, version: it.version, ...(it.removed ? { removed: true } : {}) });
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ result: { items: out } }));
    });
  });
  await new Promise((resolve) => backend.listen(port, '127.0.0.1', resolve));
  herald = await startHerald({
    http_api: { key: API_KEY },
    shared_poll: { hmac_secret_key: POLL_SECRET },
    proxies: [{ name: 'poll', endpoint: `http://127.0.0.1:${port}/refresh`, timeout: '5s' }],
    channel: {
      namespaces: [
        {
          name: 'scores',
          subscription_type: 'shared_poll',
          allow_subscribe_for_client: true,
          shared_poll: { proxy_name: 'poll', mode: 'versioned', refresh_interval: '100ms', publish_enabled: true },
        },
        {
          name: 'docs',
          subscription_type: 'shared_poll',
          allow_subscribe_for_client: true,
          allowed_delta_types: ['fossil'],
          shared_poll: { proxy_name: 'poll', mode: 'versioned', refresh_interval: '100ms', publish_enabled: true },
        },
      ],
    },
  });
});

after(async () => {
  for (const c of clients) c.disconnect();
  await herald?.stop();
  await new Promise((resolve) => backend?.close(resolve));
});

/** sign makes the signature of a key batch, as an application backend does. */
function sign(channel, user, keys) {
  const iat = Math.floor(Date.now() / 1000);
  const exp = iat + 3600;
  const keysHash = createHash('sha256').update(keys.join('\x00')).digest('hex');
  const mac = createHmac('sha256', POLL_SECRET).update(`${iat}\x00${exp}\x00${user}\x00${channel}\x00${keysHash}`).digest('hex');
  return `${iat}:${exp}:${mac}`;
}

async function pollSubscription(user, channel, options = {}) {
  const c = newClient(herald.url, { token: connectionToken(user) });
  clients.push(c);
  await connect(c);
  const sub = c.newSharedPollSubscription(channel, {
    ...options,
    getSignature: async ({ keys }) => ({ keys, signature: sign(channel, user, keys) }),
  });
  await subscribe(sub);
  return sub;
}

async function sharedPollPublish(params) {
  const res = await fetch(`http://127.0.0.1:${herald.port}/api/shared_poll_publish`, {
    method: 'POST',
    headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
  assert.equal(res.status, 200);
  return res.json();
}

test('tracked keys arrive, change, go, and stop after untrack; a publish arrives at once', async () => {
  const ch = 'scores:match1';
  items.set('home', { data: { goals: 0 }, version: 1 });
  items.set('away', { data: { goals: 0 }, version: 1 });
  const sub = await pollSubscription('alice', ch);
  const updates = new EventLog(sub, 'update');
  sub.track(['home', 'away']);
  const first = await updates.count(2);
  assert.deepEqual(first.map((u) => u.key).sort(), ['away', 'home']);
  assert.deepEqual(first[0].data, { goals: 0 });
  assert.equal(first[0].version, 1);

  // A second subscriber of the same keys gets them from the node at once,
  // and the backend is not asked more often for them.
  const sub2 = await pollSubscription('bob', ch);
  const updates2 = new EventLog(sub2, 'update');
  sub2.track(['home']);
  const [cached] = await updates2.count(1);
  assert.equal(cached.key, 'home');
  assert.equal(cached.version, 1);

  items.set('home', { data: { goals: 1 }, version: 2 });
  const [, , goal] = await updates.count(3);
  assert.equal(goal.key, 'home');
  assert.deepEqual(goal.data, { goals: 1 });
  assert.equal(goal.version, 2);
  await updates2.count(2);

  // Removed by the backend.
  items.set('away', { removed: true, version: 2 });
  const [, , , gone] = await updates.count(4);
  assert.equal(gone.key, 'away');
  assert.equal(gone.removed, true);

  // Untracked by alice: bob still gets home, alice does not (the node's
  // side of untrack is checked by hub/sharedpoll_test.go).
  sub.untrack(['home']);
  items.set('home', { data: { goals: 2 }, version: 3 });
  const [, , third] = await updates2.count(3);
  assert.equal(third.version, 3);

  // The server API pushes a version without waiting for a poll.
  await sharedPollPublish({ channel: ch, key: 'home', data: { goals: 3 }, version: 10 });
  const [, , , pushed] = await updates2.count(4);
  assert.equal(pushed.version, 10);
  assert.deepEqual(pushed.data, { goals: 3 });
  assert.equal(updates.events.length, 4, 'alice untracked home and got none of its changes');
});

test('a batch signed for another user is refused', async () => {
  const ch = 'scores:match2';
  const c = newClient(herald.url, { token: connectionToken('mallory') });
  clients.push(c);
  await connect(c);
  const sub = c.newSharedPollSubscription(ch, {
    getSignature: async ({ keys }) => ({ keys, signature: sign(ch, 'alice', keys) }),
  });
  await subscribe(sub);
  const errors = new EventLog(sub, 'error');
  sub.track(['home']);
  const [err] = await errors.count(1);
  assert.equal(err.error.code, 103);
});

test('with delta: fossil, the next versions of a key arrive as Fossil deltas the SDK applies', async () => {
  const ch = 'docs:report';
  const doc = (seq) => ({ seq, rows: Array.from({ length: 30 }, (_, i) => ({ id: i, name: `row number ${i}`, tags: ['a', 'b'] })) });
  items.set('big', { data: doc(1), version: 1 });
  const sub = await pollSubscription('carol', ch, { delta: 'fossil' });
  const updates = new EventLog(sub, 'update');
  sub.track(['big']);
  const [first] = await updates.count(1);
  assert.deepEqual(first.data, doc(1));
  items.set('big', { data: doc(2), version: 2 });
  const [, second] = await updates.count(2);
  assert.deepEqual(second.data, doc(2));
  // A version the server API pushes goes as a delta too.
  await sharedPollPublish({ channel: ch, key: 'big', data: doc(3), version: 3 });
  const [, , third] = await updates.count(3);
  assert.deepEqual(third.data, doc(3));
  const stats = sub.deltaStats();
  assert.equal(stats.numFullPayloads, 1, 'only the first data in full');
  assert.equal(stats.numDeltaPayloads, 2);
  assert.ok(stats.bytesReceived * 2 < stats.bytesDecoded, `deltas save bytes: ${stats.bytesReceived} received for ${stats.bytesDecoded}`);
});
