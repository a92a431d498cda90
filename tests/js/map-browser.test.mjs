// Map subscriptions in headless Chromium with centrifuge-js 5.8's browser
// builds (JSON and Protobuf), from a page on another origin: the page
// gets a snapshot over several pages, then updates and removals, and its
// map ends equal to what a Node writer made.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { launchBrowser, openPage, requireChromium, skipBrowser, withTimeout } from './lib/browser.mjs';
import { connect, newClient } from './lib/events.mjs';
import { CENTRIFUGE_JS, CENTRIFUGE_PROTOBUF_JS } from './lib/fallbackpage.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';

const STEP_TIMEOUT_MS = 15_000;

// The page keeps the map in window.map (key → JSON text of the value) and
// counts its sync events; the Protobuf build's values are bytes.
const page = (sdk) => `<!doctype html>
<html><head><meta charset="utf-8"><title>herald map</title></head><body>
<script src="${sdk}"></script>
<script>
window.map = {};
window.syncs = 0;
window.errors = [];
const text = (d) => d instanceof Uint8Array ? new TextDecoder().decode(d) : JSON.stringify(d);
window.start = function (url, token, channel) {
  const client = new Centrifuge(url, { token, minReconnectDelay: 100, maxReconnectDelay: 1000 });
  const sub = client.newMapSubscription(channel, { pageSize: 100 });
  sub.on('sync', (ctx) => {
    window.syncs++;
    window.binary = ctx.entries.length > 0 && ctx.entries[0].data instanceof Uint8Array;
    window.map = {};
    for (const e of ctx.entries) window.map[e.key] = text(e.data);
  });
  sub.on('update', (u) => {
    if (u.removed) delete window.map[u.key];
    else window.map[u.key] = text(u.data);
  });
  sub.on('error', (ctx) => window.errors.push(ctx.error && ctx.error.message));
  sub.subscribe();
  client.connect();
};
</script></body></html>`;

let site;
let herald;
let tmp;
let context;
const clients = [];

before(async () => {
  if (skipBrowser) return;
  requireChromium();
  const files = {
    '/': page('/centrifuge.js'),
    '/protobuf': page('/centrifuge.protobuf.js'),
    '/centrifuge.js': readFileSync(CENTRIFUGE_JS),
    '/centrifuge.protobuf.js': readFileSync(CENTRIFUGE_PROTOBUF_JS),
  };
  const server = http.createServer((req, res) => {
    const p = new URL(req.url, 'http://localhost').pathname;
    if (!(p in files)) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': p.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8' });
    res.end(files[p]);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  site = {
    origin,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  herald = await startHerald({
    websocket: { allowed_origins: [origin] },
    channel: {
      namespaces: [
        {
          name: 'board',
          subscription_type: 'map',
          allow_subscribe_for_client: true,
          map: { mode: 'recoverable', key_ttl: '300s', allow_publish_for_client: true, allow_remove_for_client: true },
        },
      ],
    },
  });
  tmp = mkdtempSync(path.join(os.tmpdir(), 'herald-map-browser-'));
  context = await launchBrowser(path.join(tmp, 'profile'), { timeout: STEP_TIMEOUT_MS });
});

after(async () => {
  for (const c of clients) c.disconnect();
  if (context) await withTimeout(context.close(), STEP_TIMEOUT_MS, 'closing Chromium').catch(() => {});
  await herald?.stop();
  await site?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

for (const build of ['json', 'protobuf']) {
  test(`a map in the browser (${build} build): snapshot over pages, updates, removals`, { skip: skipBrowser }, async () => {
    const channel = `board:${build}`;
    const writer = newClient(herald.url, { token: connectionToken('writer') });
    clients.push(writer);
    await connect(writer);
    const want = {};
    for (let i = 0; i < 250; i++) {
      const key = `k${String(i).padStart(3, '0')}`;
      await writer.mapPublish(channel, key, { v: i });
      want[key] = JSON.stringify({ v: i });
    }
    const p = await openPage(context, `${site.origin}/${build === 'protobuf' ? 'protobuf' : ''}`, STEP_TIMEOUT_MS);
    await p.evaluate(({ url, token, channel }) => window.start(url, token, channel),
      { url: herald.url, token: connectionToken('browser'), channel });
    await p.waitForFunction(() => window.syncs === 1 && Object.keys(window.map).length === 250);
    assert.equal(await p.evaluate(() => window.binary), build === 'protobuf', 'the Protobuf build gets bytes, the JSON build objects');
    await writer.mapPublish(channel, 'k000', { v: 'changed' });
    await writer.mapRemove(channel, 'k001');
    want.k000 = JSON.stringify({ v: 'changed' });
    delete want.k001;
    await p.waitForFunction((n) => Object.keys(window.map).length === n && window.map.k000 && window.map.k000.includes('changed'), Object.keys(want).length);
    const got = await p.evaluate(() => window.map);
    // JSON texts compare as values: the Protobuf build gets the bytes as published.
    assert.deepEqual(Object.fromEntries(Object.entries(got).map(([k, v]) => [k, JSON.parse(v)])),
      Object.fromEntries(Object.entries(want).map(([k, v]) => [k, JSON.parse(v)])));
    assert.deepEqual(await p.evaluate(() => window.errors), []);
    assert.deepEqual(p.errors, []);
    await p.close();
  });
}
