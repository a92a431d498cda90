// A map publish proxy's result applied to centrifuge-js 5.8's map
// publishes, as Centrifugo 6.9.1 applies it: key_mode (if_new claims a
// key once), version (an older value is dropped), tags (a subscriber's
// tagsFilter sees them), and a map remove proxy's tags. A change the
// result's conditions leave undone resolves the client's publish, as
// Centrifugo's suppressed changes do, and reaches no subscriber.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';

import { EventLog, connect, newClient, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';

let herald;
let backend;
const clients = [];

/** answer is the backend's result for a map publish or remove request. */
function answer(path, req) {
  if (path === '/map_remove') return { key: req.key, tags: { by: req.user } };
  if (req.key.startsWith('seat:')) return { key: req.key, key_mode: 'if_new', tags: { by: req.user } };
  if (req.key === 'score') return { key: req.key, version: req.data.v, version_epoch: 'game', tags: { by: req.user } };
  return { key: req.key, tags: { by: req.user } };
}

before(async () => {
  backend = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ result: answer(req.url, JSON.parse(body)) }));
    });
  });
  await new Promise((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${backend.address().port}`;
  herald = await startHerald({
    proxies: [
      { name: 'mp', endpoint: `${url}/map_publish`, timeout: '5s' },
      { name: 'mr', endpoint: `${url}/map_remove`, timeout: '5s' },
    ],
    channel: {
      namespaces: [
        {
          name: 'hall',
          subscription_type: 'map',
          allow_subscribe_for_client: true,
          allow_tags_filter: true,
          map_publish_proxy: 'mp',
          map_remove_proxy: 'mr',
          map: { mode: 'recoverable', key_ttl: '300s' },
        },
      ],
    },
  });
});

after(async () => {
  for (const c of clients) c.disconnect();
  await herald?.stop();
  backend?.close();
});

async function client(user) {
  const c = newClient(herald.url, { token: connectionToken(user) });
  clients.push(c);
  await connect(c);
  return c;
}

async function follow(c, ch, options = {}) {
  const sub = c.newMapSubscription(ch, options);
  const updates = new EventLog(sub, 'update');
  const synced = waitEvent(sub, 'sync');
  sub.subscribe();
  await synced;
  return updates;
}

test("key_mode if_new from the proxy: a seat is claimed once, the second claim resolves and changes nothing", async () => {
  const alice = await client('alice');
  const bob = await client('bob');
  const updates = await follow(await client('watcher'), 'hall:1');
  await alice.mapPublish('hall:1', 'seat:7', { who: 'alice' });
  await bob.mapPublish('hall:1', 'seat:7', { who: 'bob' }); // suppressed: resolves all the same
  await bob.mapPublish('hall:1', 'seat:8', { who: 'bob' });
  const [first, second] = await updates.count(2);
  assert.deepEqual([first.key, first.data], ['seat:7', { who: 'alice' }]);
  assert.deepEqual([second.key, second.data], ['seat:8', { who: 'bob' }], 'the refused claim reached no one');
});

test('version from the proxy: a value older than the key holds is dropped', async () => {
  const c = await client('scorer');
  const updates = await follow(await client('watcher'), 'hall:2');
  await c.mapPublish('hall:2', 'score', { v: 5 });
  await c.mapPublish('hall:2', 'score', { v: 3 }); // older: suppressed
  await c.mapPublish('hall:2', 'score', { v: 6 });
  const got = await updates.count(2);
  assert.deepEqual(got.map((u) => u.data.v), [5, 6]);
});

test("tags from the proxies reach a subscriber's tagsFilter, removals included", async () => {
  const alice = await client('alice');
  const bob = await client('bob');
  const updates = await follow(await client('watcher'), 'hall:3', { tagsFilter: { key: 'by', cmp: 'eq', val: 'alice' } });
  await bob.mapPublish('hall:3', 'b', { n: 1 });
  await alice.mapPublish('hall:3', 'a', { n: 2 });
  await bob.mapRemove('hall:3', 'b'); // tagged by bob: filtered out
  await alice.mapRemove('hall:3', 'a');
  const got = await updates.count(2);
  assert.deepEqual(got.map((u) => [u.key, u.removed === true]), [['a', false], ['a', true]]);
  assert.equal(updates.events.length, 2, "bob's changes, tagged by bob, were filtered out");
});
