// Hostile input seen through a real headless Chromium:
//
// - the admin UI shows a channel name, a user id and publication data that
//   are markup and script (in the channels list, presence, history, the
//   live tail and the connections list) as text: the test fails if any of
//   it runs a script, loads a resource, or is parsed as markup (even one
//   the page's Content-Security-Policy would then block);
// - publication data holding raw CR, CRLF and LF (JSON whitespace, kept as
//   published) reaches a browser's EventSource as one event per message on
//   /connection/sse, /connection/uni_sse and the admin live tail: a raw CR
//   in a data line used to end it, and JSON.parse failed for every
//   subscriber.
//
// One node on the memory engine. Needs Chromium (/usr/bin/chromium, or
// HERALD_CHROMIUM; playwright-core downloads no browser): without it the
// test is skipped, or fails when HERALD_TEST_REQUIRE_SERVICES=1.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import jwt from 'jsonwebtoken';

import { launchBrowser, openPage, requireChromium, skipBrowser } from './lib/browser.mjs';
import { connect, newClient, subscribe } from './lib/events.mjs';
import { SECRET, connectionToken, startHerald } from './lib/herald.mjs';

const PASSWORD = 'hostile-test-password';
const API_KEY = 'hostile-test-api-key';
const STEP_TIMEOUT_MS = 15_000;

// Every payload would set window.__pwned, or load a URL whose path holds
// "pwned", if it ran or were parsed as markup.
const HOSTILE_CHANNEL = '<img src=/pwned-channel onerror=window.__pwned=1>';
const HOSTILE_USER = '<script>window.__pwned=1</script><img src=/pwned-user onerror=window.__pwned=1>';
const HOSTILE_DATA = {
  text: '</script><script>window.__pwned=1</script><img src=/pwned-data onerror="window.__pwned=1">',
  href: 'javascript:window.__pwned=1',
  svg: '<svg onload=window.__pwned=1></svg><iframe src=/pwned-frame></iframe>',
};

// Publication data with raw line breaks between JSON tokens, exactly as a
// publisher may send it; and the value every subscriber must parse.
const CR_DATA = '{"a":\r\r1,\r\n"b":\n[2,\r3]}';
const CR_VALUE = { a: 1, b: [2, 3] };

let node;
let browser;
let profile;

before(async () => {
  if (skipBrowser) return;
  requireChromium();
  node = await startHerald({
    http_api: { key: API_KEY },
    admin: { ui: { enabled: true, password: PASSWORD } },
    uni_sse: { enabled: true },
    channel: {
      without_namespace: {
        allow_subscribe_for_client: true, presence: true, history_size: 100, history_ttl: '5m',
        join_leave: true, force_push_join_leave: true,
      },
    },
  });
  profile = mkdtempSync(path.join(os.tmpdir(), 'herald-hostile-chromium-'));
  browser = await launchBrowser(profile, { timeout: STEP_TIMEOUT_MS });
});

after(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await node?.stop();
});

/** apiRaw posts a raw body (not re-encoded) to the server API. */
async function apiRaw(method, body) {
  const res = await fetch(`http://127.0.0.1:${node.port}/api/${method}`, {
    method: 'POST',
    headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
    body,
  });
  assert.equal(res.status, 200, `${method}: HTTP ${res.status}`);
  const out = await res.json();
  assert.ok(!out.error, `${method}: ${JSON.stringify(out.error)}`);
  return out.result;
}

/**
 * watchPage records what a hostile payload could make the page do: a
 * request for a "pwned" URL, a dialog, a CSP violation (markup that got
 * parsed, blocked only by the policy).
 */
async function watchPage(page) {
  const seen = [];
  page.on('request', (req) => {
    // The payloads' URLs are /pwned-…; the tail's own request names the
    // channel in its query, which is fine.
    if (new URL(req.url()).pathname.includes('pwned')) seen.push(`request ${req.url()}`);
  });
  page.on('dialog', async (d) => {
    seen.push(`dialog ${d.message()}`);
    await d.dismiss();
  });
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) seen.push(`csp ${msg.text()}`);
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window.__violations ||= []).push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  return seen;
}

/** assertClean fails if anything hostile ran or was parsed on page. */
async function assertClean(page, seen, where) {
  const state = await page.evaluate(() => ({
    pwned: window.__pwned,
    violations: window.__violations || [],
    // Markup from a payload would have made elements the UI never makes.
    injected: document.querySelectorAll('img, svg, iframe, script:not([src])').length,
  }));
  assert.equal(state.pwned, undefined, `${where}: an injected script ran`);
  assert.deepEqual(state.violations, [], `${where}: the page parsed injected markup (blocked by CSP)`);
  assert.equal(state.injected, 0, `${where}: injected elements in the page`);
  assert.deepEqual(seen, [], `${where}: the page acted on a payload`);
  assert.deepEqual(page.errors, [], `${where}: script errors on the page`);
}

test('the admin UI shows hostile channel names, user ids and data as text', { skip: skipBrowser, timeout: 120_000 }, async (t) => {
  // A client whose user id is markup, subscribed to a channel whose name
  // is markup.
  const client = newClient(node.url, { token: connectionToken(HOSTILE_USER) });
  t.after(() => client.disconnect());
  await connect(client);
  await subscribe(client.newSubscription(HOSTILE_CHANNEL));
  await apiRaw('publish', JSON.stringify({ channel: HOSTILE_CHANNEL, data: HOSTILE_DATA }));

  const page = await browser.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  page.errors = [];
  page.on('pageerror', (err) => page.errors.push(err.message));
  const seen = await watchPage(page);
  t.after(() => page.close());
  await page.goto(`http://127.0.0.1:${node.port}/admin/`);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('#login-form button').click();
  await page.locator('#page-overview').waitFor();

  // Channels list, presence and history of the hostile channel.
  await page.locator('nav a[data-page=channels]').click();
  await page.locator('#channel-search').fill('*');
  await page.locator('#channels-form button').click();
  const row = page.locator('#channels tbody tr').filter({ has: page.locator('code', { hasText: HOSTILE_CHANNEL }) });
  await row.waitFor();
  await row.locator('button.open').click();
  await page.locator('#channel-name', { hasText: HOSTILE_CHANNEL }).waitFor();
  await page.locator('#presence li', { hasText: HOSTILE_USER }).waitFor();
  await page.locator('#history tbody tr', { hasText: 'pwned-data' }).waitFor();
  await assertClean(page, seen, 'channel page');

  // The live tail: a hostile publication, a join of the hostile user, and
  // data with raw line breaks, which EventSource must get whole.
  await page.locator('#tail-start').click();
  await page.locator('#tail-status', { hasText: 'live' }).waitFor();
  const other = newClient(node.url, { token: connectionToken(`${HOSTILE_USER}-2`) });
  t.after(() => other.disconnect());
  await connect(other);
  await subscribe(other.newSubscription(HOSTILE_CHANNEL));
  await page.locator('#tail li.join', { hasText: `${HOSTILE_USER}-2` }).waitFor();
  await apiRaw('publish', JSON.stringify({ channel: HOSTILE_CHANNEL, data: HOSTILE_DATA }));
  await page.locator('#tail li.pub', { hasText: 'pwned-frame' }).waitFor();
  await apiRaw('publish', `{"channel":${JSON.stringify(HOSTILE_CHANNEL)},"data":${CR_DATA}}`);
  await page.locator('#tail li.pub', { hasText: JSON.stringify(CR_VALUE) }).waitFor();
  await assertClean(page, seen, 'live tail');

  // Connections: the hostile user and channel in the list.
  await page.locator('nav a[data-page=connections]').click();
  await page.locator('#conn-channel').fill(HOSTILE_CHANNEL);
  await page.locator('#connections-form button').click();
  await page.locator('#connections tbody td.user', { hasText: `${HOSTILE_USER}-2` }).waitFor();
  await page.locator('#connections tbody .chip', { hasText: HOSTILE_CHANNEL }).first().waitFor();
  await assertClean(page, seen, 'connections page');

  // The page's actions carry the hostile names to the API intact: the
  // unsubscribe button on the hostile user's chip of the hostile channel
  // unsubscribes that client, and the list shows it without the chip.
  const otherRow = page.locator('#connections tbody tr', { has: page.locator('td.user', { hasText: `${HOSTILE_USER}-2` }) });
  await otherRow.locator('.chip', { hasText: HOSTILE_CHANNEL }).locator('button.unsubscribe').click();
  await otherRow.locator('.chip', { hasText: HOSTILE_CHANNEL }).waitFor({ state: 'detached' });
  assert.equal(await page.locator('#connections-partial').isVisible(), false, 'the unsubscribe failed');
  await assertClean(page, seen, 'connections page after an unsubscribe');
});

test('EventSource gets publications with raw CR, CRLF and LF whole on sse and uni_sse', { skip: skipBrowser, timeout: 60_000 }, async (t) => {
  const channel = 'linebreaks';
  // The server subscribes the streams to the channel (the token's
  // channels claim), so they need no command after connecting.
  const token = jwt.sign({ sub: 'es-user', channels: [channel] }, SECRET, { algorithm: 'HS256', expiresIn: 3600 });
  // A page of the node's origin: the streams accept same-origin pages.
  const page = await openPage(browser, `http://127.0.0.1:${node.port}/admin/`, STEP_TIMEOUT_MS);
  t.after(() => page.close());
  await page.evaluate(({ token }) => {
    window.__got = { sse: [], uni_sse: [], bad: [] };
    const open = (name, url) => {
      const es = new EventSource(url);
      es.onmessage = (ev) => {
        let msg;
        try {
          msg = JSON.parse(ev.data);
        } catch (err) {
          window.__got.bad.push(`${name}: ${JSON.stringify(ev.data)}: ${err.message}`);
          return;
        }
        // The bidirectional stream wraps pushes in replies.
        const push = msg.push ?? msg;
        if (push.pub) window.__got[name].push(push.pub.data);
        if (msg.connect || push.connect) window.__got[`${name}_open`] = true;
      };
    };
    open('sse', `/connection/sse?cf_connect=${encodeURIComponent(JSON.stringify({ id: 1, connect: { token } }))}`);
    open('uni_sse', `/connection/uni_sse?cf_connect=${encodeURIComponent(JSON.stringify({ token }))}`);
  }, { token });
  await page.waitForFunction(() => window.__got.sse_open && window.__got.uni_sse_open);
  // Both are subscribed once the node counts two subscribers.
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const res = await apiRaw('presence_stats', JSON.stringify({ channel }));
    if (res.num_clients === 2) break;
    assert.ok(Date.now() < deadline, `subscribers: ${JSON.stringify(res)}, want 2`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await apiRaw('publish', `{"channel":"${channel}","data":${CR_DATA}}`);
  await apiRaw('publish', `{"channel":"${channel}","data":"after"}`);
  await page.waitForFunction(() => window.__got.sse.length + window.__got.uni_sse.length + window.__got.bad.length >= 4);
  const got = await page.evaluate(() => window.__got);
  assert.deepEqual(got.bad, [], 'events EventSource could not parse');
  assert.deepEqual(got.sse, [CR_VALUE, 'after'], 'sse publications');
  assert.deepEqual(got.uni_sse, [CR_VALUE, 'after'], 'uni_sse publications');
  assert.deepEqual(page.errors, [], 'no script errors on the page');
});

// A channel name as long as a channel may be (255 bytes) and a user id far
// longer, both with control characters, a right-to-left override, a line
// separator and a byte-order mark: shown as text, and the page stays
// usable (its navigation still takes clicks, nothing overflows it).
// Channel names are printable ASCII (anything else is error 107), so the
// control characters go in the user id and the data.
const CONTROL = '\u0001\u0007\u001b[31m\u202e\u2028\ufeff';
const LONG_CHANNEL = `long<i>${'x'.repeat(255 - 7)}`;
const LONG_USER = `${CONTROL}<b>${'u'.repeat(4000)}</b>`;

test('the admin UI shows very long names with control characters as text and stays usable', { skip: skipBrowser, timeout: 120_000 }, async (t) => {
  assert.equal(Buffer.byteLength(LONG_CHANNEL), 255);
  const client = newClient(node.url, { token: connectionToken(LONG_USER) });
  t.after(() => client.disconnect());
  await connect(client);
  await subscribe(client.newSubscription(LONG_CHANNEL));
  await apiRaw('publish', JSON.stringify({ channel: LONG_CHANNEL, data: { text: CONTROL } }));

  const page = await browser.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  page.errors = [];
  page.on('pageerror', (err) => page.errors.push(err.message));
  const seen = await watchPage(page);
  t.after(() => page.close());
  await browser.clearCookies(); // log in afresh: the other test's session is in the profile
  await page.goto(`http://127.0.0.1:${node.port}/admin/`);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('#login-form button').click();
  await page.locator('#page-overview').waitFor();

  await page.locator('nav a[data-page=channels]').click();
  await page.locator('#channel-search').fill('long*');
  await page.locator('#channels-form button').click();
  const row = page.locator('#channels tbody tr').filter({ has: page.locator('code', { hasText: 'xxxxxxxxxx' }) });
  await row.waitFor();
  await row.locator('button.open').click();
  await page.locator('#presence li', { hasText: 'uuuuuuuuuu' }).waitFor();
  const shown = await page.evaluate(() => ({
    channel: document.querySelector('#channel-name')?.textContent ?? '',
    user: document.querySelector('#presence li')?.textContent ?? '',
    // An element made of the payload's own tags would hold just the text
    // between them (the UI's own <b> around a user id holds the whole id).
    bold: [...document.querySelectorAll('b, i')].filter((e) => /^(u{10}|x{10})/.test(e.textContent)).length,
    overflow: document.documentElement.scrollWidth - window.innerWidth,
  }));
  assert.ok(shown.channel.includes(LONG_CHANNEL), 'the channel name is shown whole, as text');
  assert.ok(shown.user.includes('<b>'), 'the user id is shown as text');
  assert.equal(shown.bold, 0, 'a name was parsed as markup');
  assert.ok(shown.overflow <= 0, `the page overflows its width by ${shown.overflow}px`);
  await assertClean(page, seen, 'channel page with long names');

  // Still usable: the navigation takes clicks (a name laid over it would
  // intercept them) and another page opens.
  await page.locator('nav a[data-page=connections]').click();
  await page.locator('#conn-channel').fill(LONG_CHANNEL);
  await page.locator('#connections-form button').click();
  await page.locator('#connections tbody td.user', { hasText: 'uuuuuuuuuu' }).waitFor();
  const width = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(width <= 0, `the connections page overflows its width by ${width}px`);
  await page.locator('nav a[data-page=overview]').click();
  await page.locator('#page-overview').waitFor();
  await assertClean(page, seen, 'connections page with long names');
});
