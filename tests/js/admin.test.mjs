// The admin web UI in a real headless Chromium against a 2-node Herald
// cluster on PostgreSQL: log in, see both nodes, find a channel whose
// subscriber (a centrifuge-js client) is on node 2, tail it while the
// server API publishes, publish from the UI and see the SDK client receive
// it, trace the user (on node 2) from node 1's page, and disconnect the
// user. A screenshot of each page is kept in
// .tmp/logs/admin-*.png.
//
// Needs HERALD_TEST_POSTGRES_DSN and Chromium (/usr/bin/chromium, or
// HERALD_CHROMIUM; playwright-core downloads no browser). Without them the
// test is skipped, or fails when HERALD_TEST_REQUIRE_SERVICES=1.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { launchBrowser, openPage, requireChromium, skipBrowser } from './lib/browser.mjs';
import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { lockPostgres } from './lib/pglock.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const LOGS = path.join(here, '..', '..', '.tmp', 'logs');

const DSN = process.env.HERALD_TEST_POSTGRES_DSN;
const required = process.env.HERALD_TEST_REQUIRE_SERVICES === '1';
const skip = skipBrowser || (!DSN && !required ? 'HERALD_TEST_POSTGRES_DSN is not set' : false);

const PASSWORD = 'admin-test-password';
const API_KEY = 'admin-test-api-key';
const STEP_TIMEOUT_MS = 15_000;
const CHANNEL = 'feed';

let nodes = [];
let browser;
let profile;
let pgLock;

before(async () => {
  if (skip) return;
  requireChromium();
  assert.ok(DSN, 'HERALD_TEST_POSTGRES_DSN is required (HERALD_TEST_REQUIRE_SERVICES=1)');
  pgLock = await lockPostgres('admin.test.mjs');
  // A schema of this run's own: the nodes find each other through it.
  const schema = `adminjs_${process.pid}_${Date.now() % 100000}`;
  const config = (name) => ({
    name,
    engine: { type: 'postgres', postgres: { dsn: DSN, schema } },
    http_api: { key: API_KEY },
    admin: { ui: { enabled: true, password: PASSWORD } },
    channel: {
      without_namespace: {
        allow_subscribe_for_client: true, presence: true, history_size: 100, history_ttl: '5m',
      },
    },
  });
  nodes = [await startHerald(config('node-1'))];
  nodes.push(await startHerald(config('node-2')));
  mkdirSync(LOGS, { recursive: true });
  profile = mkdtempSync(path.join(os.tmpdir(), 'herald-admin-chromium-'));
  browser = await launchBrowser(profile, { timeout: STEP_TIMEOUT_MS });
});

after(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await Promise.all(nodes.map((n) => n.stop()));
  pgLock?.release();
});

/** apiCall calls node's server API. */
async function apiCall(node, method, params) {
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

async function shot(page, name, t) {
  const file = path.join(LOGS, `admin-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  t.diagnostic(`screenshot: ${file}`);
}

test('the admin UI shows and runs a 2-node PostgreSQL cluster', { skip, timeout: 120_000 }, async (t) => {
  const [node1, node2] = nodes;
  // The subscriber is on node 2; the browser talks to node 1 only.
  const carol = newClient(node2.url, { token: connectionToken('carol') });
  t.after(() => carol.disconnect());
  await connect(carol);
  const sub = carol.newSubscription(CHANNEL);
  const received = new EventLog(sub, 'publication');
  await subscribe(sub);

  const page = await openPage(browser, `http://127.0.0.1:${node1.port}/admin/`, STEP_TIMEOUT_MS);
  t.after(() => page.close());

  // Requests without a session are refused.
  const anon = await fetch(`http://127.0.0.1:${node1.port}/admin/api/overview`);
  assert.equal(anon.status, 401);

  // Log in: a wrong password is refused, the right one opens the overview.
  await page.locator('#password').fill('wrong-password');
  await page.locator('#login-form button').click();
  await page.locator('#login-error', { hasText: 'wrong password' }).waitFor();
  await page.locator('#password').fill(PASSWORD);
  await page.locator('#login-form button').click();
  await page.locator('#page-overview').waitFor();

  // Both nodes, with node 2's client counted.
  await page.waitForFunction(() => document.querySelectorAll('#nodes tbody tr').length === 2);
  const names = await page.locator('#nodes tbody td.name').allTextContents();
  assert.deepEqual(names.map((n) => n.replace(/this$/, '')).sort(), ['node-1', 'node-2']);
  await page.locator('#nodes tbody tr', { hasText: 'node-2' }).locator('td.clients', { hasText: /^1$/ }).waitFor();
  await shot(page, 'overview', t);

  // Channels: the channel whose only subscriber is on node 2.
  await page.locator('nav a[data-page=channels]').click();
  await page.locator('#channel-search').fill('fe*');
  await page.locator('#channels-form button').click();
  const row = page.locator(`#channels tbody tr[data-channel="${CHANNEL}"]`);
  await row.locator('td.num', { hasText: /^1$/ }).waitFor();
  await row.locator('button.open').click();
  await page.locator('#presence li', { hasText: 'carol' }).waitFor();

  // Tail it while the API (of node 2) publishes.
  await page.locator('#tail-start').click();
  await page.locator('#tail-status', { hasText: 'live' }).waitFor();
  await apiCall(node2, 'publish', { channel: CHANNEL, data: { text: 'from-api' } });
  await page.locator('#tail li.pub', { hasText: 'from-api' }).waitFor();
  const [fromApi] = await received.count(1);
  assert.deepEqual(fromApi.data, { text: 'from-api' });
  // History shows it too (reopen the channel to reload it).
  await row.locator('button.open').click();
  await page.locator('#history tbody tr', { hasText: 'from-api' }).waitFor();
  await page.locator('#tail-start').click();
  await page.locator('#tail-status', { hasText: 'live' }).waitFor();
  await apiCall(node1, 'publish', { channel: CHANNEL, data: { text: 'again-from-api' } });
  await page.locator('#tail li.pub', { hasText: 'again-from-api' }).waitFor();
  await received.count(2);
  await shot(page, 'channels', t);

  // Publish from the UI: the SDK client on node 2 receives it, the tail
  // shows it.
  await page.locator('nav a[data-page=actions]').click();
  await page.locator('#pub-channel').fill(CHANNEL);
  await page.locator('#pub-data').fill('{"text":"from-ui"}');
  await page.locator('#publish-form button').click();
  await page.locator('#answer', { hasText: '"offset"' }).waitFor();
  const [, , fromUI] = await received.count(3);
  assert.deepEqual(fromUI.data, { text: 'from-ui' });
  // Any method, with its raw answer.
  await page.locator('#method').selectOption('info');
  await page.locator('#method-form button').click();
  await page.locator('#answer', { hasText: 'node-2' }).waitFor();
  await shot(page, 'actions', t);

  // Trace carol (on node 2) from node 1's page: node 2's copy of the
  // trace starts when the lease reaches it, so publish until a publication
  // traced on node 2 shows; then her disconnect below shows too.
  await page.locator('nav a[data-page=trace]').click();
  await page.locator('#trace-type').selectOption('user');
  await page.locator('#trace-entity').fill('carol');
  await page.locator('#trace-start').click();
  await page.locator('#trace-status', { hasText: 'live' }).waitFor();
  const tracedPub = page.locator('#trace-log li.publication', { hasText: 'node-2' }).first();
  for (let i = 0; ; i++) {
    await apiCall(node1, 'publish', { channel: CHANNEL, data: { text: `traced-${i}` } });
    try {
      await tracedPub.waitFor({ timeout: 1000 });
      break;
    } catch (err) {
      if (i >= 10) throw err;
    }
  }
  await shot(page, 'trace-cluster', t);

  // Connections: carol is on node 2 (the admin tail, on node 1, is listed
  // too, anonymous); disconnect her.
  await page.locator('nav a[data-page=connections]').click();
  await page.locator('#conn-user').fill('carol');
  await page.locator('#connections-form button').click();
  const carolRow = page.locator('#connections tbody tr[data-user="carol"]');
  await carolRow.locator('td', { hasText: 'node-2' }).waitFor();
  await carolRow.locator(`.chip[data-channel="${CHANNEL}"]`).waitFor();
  await shot(page, 'connections', t);
  // The API's disconnect is for good (3501 force no reconnect): the SDK
  // stays disconnected, and the list no longer shows her.
  const gone = waitEvent(carol, 'disconnected', { timeoutMs: STEP_TIMEOUT_MS });
  await carolRow.locator('button.disconnect').click();
  const ctx = await gone;
  assert.ok(ctx.code >= 3000, `carol disconnected with ${ctx.code} ${ctx.reason}`);
  await carolRow.waitFor({ state: 'detached' });
  await page.locator('nav a[data-page=trace]').click();
  await page.locator('#trace-log li.disconnect', { hasText: 'node-2' }).waitFor();
  await page.locator('#trace-stop').click();

  // Charts have samples by now.
  await page.locator('nav a[data-page=charts]').click();
  await page.waitForFunction(() => document.querySelector('#chart-clients').width > 0);
  await shot(page, 'charts', t);

  assert.deepEqual(page.errors, [], 'no script errors on the page');
});
