// The admin UI's live trace and inspector in a real headless Chromium: open
// a trace of a user, connect a centrifuge-js client as that user, and see
// its connect, subscribe and a publication appear; inspect the channel and
// see its subscriber, then the user and see its connection. The user id
// and the channel name are markup (and the user id holds a control
// character): the page must show them as text. A screenshot is kept in
// .tmp/logs/admin-trace.png.
//
// One node on the memory engine. Needs Chromium (/usr/bin/chromium, or
// HERALD_CHROMIUM; playwright-core downloads no browser): without it the
// test is skipped, or fails when HERALD_TEST_REQUIRE_SERVICES=1.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { launchBrowser, openPage, requireChromium, skipBrowser } from './lib/browser.mjs';
import { connect, newClient, subscribe } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const LOGS = path.join(here, '..', '..', '.tmp', 'logs');

const PASSWORD = 'trace-test-password';
const API_KEY = 'trace-test-api-key';
const STEP_TIMEOUT_MS = 15_000;
// Would set window.__pwned or add an element if parsed as markup.
const USER = '<img src=/pwned-user onerror=window.__pwned=1>\u0007bell';
const CHANNEL = 'room<b onclick=window.__pwned=1>bold</b>';
// How the page shows USER: as text, its control character escaped.
const USER_SHOWN = '<img src=/pwned-user onerror=window.__pwned=1>\\u0007bell';

let node;
let browser;
let profile;

before(async () => {
  if (skipBrowser) return;
  requireChromium();
  node = await startHerald({
    http_api: { key: API_KEY },
    admin: { ui: { enabled: true, password: PASSWORD } },
    channel: {
      without_namespace: {
        allow_subscribe_for_client: true, presence: true, history_size: 10, history_ttl: '5m',
      },
    },
  });
  mkdirSync(LOGS, { recursive: true });
  profile = mkdtempSync(path.join(os.tmpdir(), 'herald-trace-chromium-'));
  browser = await launchBrowser(profile, { timeout: STEP_TIMEOUT_MS });
});

after(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await node?.stop();
});

async function apiCall(method, params) {
  const res = await fetch(`http://127.0.0.1:${node.port}/api/${method}`, {
    method: 'POST',
    headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
  assert.equal(res.status, 200, `${method}: HTTP ${res.status}`);
  const body = await res.json();
  assert.ok(!body.error, `${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

test('the admin UI traces a user live and inspects a channel and a user', { skip: skipBrowser, timeout: 120_000 }, async (t) => {
  const page = await openPage(browser, `http://127.0.0.1:${node.port}/admin/`, STEP_TIMEOUT_MS);
  t.after(() => page.close());
  const pwned = [];
  page.on('request', (req) => { if (new URL(req.url()).pathname.includes('pwned')) pwned.push(req.url()); });
  page.on('dialog', async (d) => { pwned.push(`dialog ${d.message()}`); await d.dismiss(); });

  await page.locator('#password').fill(PASSWORD);
  await page.locator('#login-form button').click();
  await page.locator('#page-overview').waitFor();

  // Trace the user before it connects.
  await page.locator('nav a[data-page=trace]').click();
  await page.locator('#trace-type').selectOption('user');
  await page.locator('#trace-entity').fill(USER);
  await page.locator('#trace-start').click();
  await page.locator('#trace-status', { hasText: 'live' }).waitFor();

  const client = newClient(node.url, { token: connectionToken(USER) });
  t.after(() => client.disconnect());
  await connect(client);
  await subscribe(client.newSubscription(CHANNEL));
  await apiCall('publish', { channel: CHANNEL, data: { text: 'traced <i>pub</i>' } });

  const connectLine = page.locator('#trace-log li.connect');
  await connectLine.waitFor();
  assert.equal(await connectLine.locator('code.user').textContent(), USER_SHOWN);
  const subLine = page.locator('#trace-log li.subscribe');
  await subLine.waitFor();
  assert.equal(await subLine.locator('code.channel').textContent(), CHANNEL);
  const pubLine = page.locator('#trace-log li.publication', { hasText: 'traced <i>pub</i>' });
  await pubLine.waitFor();
  assert.equal(await pubLine.locator('code.channel').textContent(), CHANNEL);

  // Inspect the channel: its one subscriber is the user.
  await page.locator('#trace-type').selectOption('channel');
  await page.locator('#trace-entity').fill(CHANNEL);
  await page.locator('#trace-inspect').click();
  await page.locator('#inspect-name', { hasText: CHANNEL }).waitFor();
  await page.locator('#inspect-facts [data-fact=subscribers] b', { hasText: /^1$/ }).waitFor();
  assert.equal(await page.locator('#inspect-conns tbody td.user').textContent(), USER_SHOWN);
  await page.locator('#inspect-facts [data-fact="history position"] b', { hasText: /^1 · / }).waitFor();
  await page.locator('#inspect-facts [data-fact="presence clients / users"] b', { hasText: '1 / 1' }).waitFor();

  // Inspect the user: one connection, subscribed to the channel, not
  // blocked; then blocked by the API (which disconnects it).
  await page.locator('#trace-type').selectOption('user');
  await page.locator('#trace-entity').fill(USER);
  await page.locator('#trace-inspect').click();
  await page.locator('#inspect-facts [data-fact=connections] b', { hasText: /^1$/ }).waitFor();
  await page.locator('#inspect-facts [data-fact=subscriptions] b', { hasText: /^1$/ }).waitFor();
  await page.locator('#inspect-facts [data-fact=blocked] b', { hasText: 'no' }).waitFor();
  await page.locator('#inspect-conns .chip', { hasText: CHANNEL }).waitFor();
  await shot(page, t);

  await apiCall('block_user', { user: USER });
  // The trace shows the disconnect the block caused.
  await page.locator('#trace-log li.disconnect').waitFor();
  await page.locator('#inspect-refresh').click();
  await page.locator('#inspect-facts [data-fact=blocked] b', { hasText: 'for ever' }).waitFor();

  const injected = await page.evaluate(() => ({
    pwned: window.__pwned,
    elements: document.querySelectorAll('img, b[onclick], i, script:not([src])').length,
  }));
  assert.equal(injected.pwned, undefined, 'an injected script ran');
  assert.equal(injected.elements, 0, 'names or data were parsed as markup');
  assert.deepEqual(pwned, [], 'the page acted on a hostile name');
  assert.deepEqual(page.errors, [], 'no script errors on the page');
});

async function shot(page, t) {
  const file = path.join(LOGS, 'admin-trace.png');
  await page.screenshot({ path: file, fullPage: true });
  t.diagnostic(`screenshot: ${file}`);
}
