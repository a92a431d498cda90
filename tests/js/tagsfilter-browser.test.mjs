// Tags filter and cache recovery in a real headless Chromium, with
// centrifuge-js's browser builds (JSON and Protobuf): every operator passes
// exactly its publications, a bad filter is refused with 107, and a new
// subscriber to a cache-recovery channel gets the latest publication at once.
// One node on the memory engine. Needs Chromium (/usr/bin/chromium, or
// HERALD_CHROMIUM): without it the test is skipped, or fails when
// HERALD_TEST_REQUIRE_SERVICES=1.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { launchBrowser, openPage, requireChromium, skipBrowser } from './lib/browser.mjs';
import { CENTRIFUGE_JS, CENTRIFUGE_PROTOBUF_JS } from './lib/fallbackpage.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { CASES, PUBS } from './lib/tagscases.mjs';
import { api, transportConfig } from './lib/transports.mjs';

const STEP_TIMEOUT_MS = 15_000;

// window.run subscribes one channel per case with its filter, a cache
// channel with since {}, and a channel with a bad filter, and records every
// publication and refusal in window.events.
const page = (sdk) => `<!doctype html>
<html><head><meta charset="utf-8"><title>herald tags filter</title></head>
<body><script src="${sdk}"></script>
<script>
window.events = [];
window.run = function (url, token, build, cases) {
  const client = new Centrifuge(url, { token, minReconnectDelay: 100, maxReconnectDelay: 1000, timeout: 5000 });
  const decode = (d) => (d instanceof Uint8Array ? JSON.parse(new TextDecoder().decode(d)) : d);
  const on = (sub, name) => {
    sub.on('publication', (ctx) => window.events.push({ kind: 'pub', name, n: decode(ctx.data).n, tags: ctx.tags || {} }));
    sub.on('subscribed', () => window.events.push({ kind: 'subscribed', name }));
    sub.on('unsubscribed', (ctx) => window.events.push({ kind: 'unsubscribed', name, code: ctx.code }));
    sub.subscribe();
  };
  for (const c of cases) on(client.newSubscription('tf:' + c.name, { tagsFilter: c.filter }), c.name);
  on(client.newSubscription('cache:' + build + '-latest', { since: {} }), 'cache');
  on(client.newSubscription('tf:' + build + '-bad', { tagsFilter: { key: 'k', cmp: 'like', val: 'v' } }), 'bad');
  client.connect();
};
</script></body></html>`;

let herald;
let site;
let context;
let tmp;

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
    const body = files[new URL(req.url, 'http://localhost').pathname];
    res.writeHead(body ? 200 : 404, { 'Content-Type': req.url.endsWith('.js') ? 'text/javascript' : 'text/html' });
    res.end(body ?? 'not found');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  site = { origin: `http://127.0.0.1:${server.address().port}`, server };
  herald = await startHerald(
    transportConfig({
      websocket: { allowed_origins: [site.origin] },
      channel: {
        namespaces: [
          { name: 'tf', allow_subscribe_for_client: true, allow_tags_filter: true },
          { name: 'cache', allow_subscribe_for_client: true, history_size: 1, history_ttl: '300s', force_recovery: true, force_recovery_mode: 'cache' },
        ],
      },
    }),
  );
  tmp = mkdtempSync(path.join(os.tmpdir(), 'herald-tags-chromium-'));
  context = await launchBrowser(path.join(tmp, 'profile'), { timeout: STEP_TIMEOUT_MS });
});

after(async () => {
  await context?.close().catch(() => {});
  await herald?.stop();
  if (site) {
    site.server.closeAllConnections();
    await new Promise((resolve) => site.server.close(resolve));
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

for (const build of ['json', 'protobuf']) {
  test(`Chromium, ${build} build: every operator, a refused filter, cache recovery`, { skip: skipBrowser, timeout: 60_000 }, async () => {
    // Channels of their own per build (tf:<build>-<case>, cache:<build>-latest).
    const publish = (channel, n, tags) => api(herald.port, 'publish', { channel, data: { n }, tags });
    for (let n = 1; n <= 3; n++) await publish(`cache:${build}-latest`, n);

    const p = await openPage(context, `${site.origin}/${build === 'protobuf' ? 'protobuf' : ''}`, STEP_TIMEOUT_MS);
    try {
      const url = `ws://127.0.0.1:${herald.port}/connection/websocket${build === 'protobuf' ? '?format=protobuf' : ''}`;
      const cases = CASES.map((c) => ({ ...c, name: `${build}-${c.name}` }));
      await p.evaluate(({ url, token, build, cases }) => window.run(url, token, build, cases), {
        url,
        token: connectionToken(`browser-tags-${build}`),
        build,
        cases: cases.map(({ name, filter }) => ({ name, filter })),
      });
      // Every case subscribed, the bad one refused with 107.
      await p.waitForFunction((n) => window.events.filter((e) => e.kind === 'subscribed').length >= n, CASES.length + 1);
      await p.waitForFunction(() => window.events.some((e) => e.kind === 'unsubscribed' && e.name === 'bad'));
      assert.equal((await p.evaluate(() => window.events.find((e) => e.name === 'bad'))).code, 107);

      // Cache recovery: the latest publication, once.
      await p.waitForFunction(() => window.events.some((e) => e.kind === 'pub' && e.name === 'cache'));
      assert.deepEqual(await p.evaluate(() => window.events.filter((e) => e.name === 'cache' && e.kind === 'pub').map((e) => e.n)), [3]);

      for (const c of cases) {
        const channel = `tf:${c.name}`;
        for (const [i, tags] of PUBS.entries()) await publish(channel, i + 1, tags);
        await publish(channel, 99, c.end);
      }
      for (const c of cases) {
        await p.waitForFunction((name) => window.events.some((e) => e.kind === 'pub' && e.name === name && e.n === 99), c.name);
        const got = await p.evaluate((name) => window.events.filter((e) => e.kind === 'pub' && e.name === name), c.name);
        assert.deepEqual(
          got.map((e) => e.n),
          [...c.want, 99],
          `${c.name}: ${JSON.stringify(c.filter)}`,
        );
        for (const e of got) assert.deepEqual(e.tags, e.n === 99 ? c.end : PUBS[e.n - 1], `${c.name}: tags`);
      }
      assert.deepEqual(p.errors, []);
    } finally {
      await p.close().catch(() => {});
    }
  });
}
