// Transport fallback in a real headless Chromium (the system's, driven by
// playwright-core; no browser download). A page served from another origin
// loads centrifuge-js and is given WebSocket, HTTP-streaming and SSE
// endpoints: it connects over WebSocket; with the WebSocket endpoint
// broken (a wrong path) it falls back to HTTP-streaming (with the JSON and
// the Protobuf build of the SDK); with that broken too, to SSE, where it still receives publications, and after its node
// restarts it reconnects and recovers what it missed (on Redis, where
// history outlives the node; on the memory engine it reconnects and
// receives again). A page from an origin that is not allowed connects over
// none of them.
//
// A failed test keeps a screenshot of its page (which lists every client
// event) in .tmp/logs/.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { launchBrowser, openPage, requireChromium, skipBrowser, withTimeout } from './lib/browser.mjs';
import { startPageServer } from './lib/fallbackpage.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { PATHS, api, httpBase, redisAddr, redisEngine, requireServices, transportConfig, uniqueName } from './lib/transports.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const LOGS = path.join(here, '..', '..', '.tmp', 'logs');

// Every wait is bounded; generous for a loaded 2-core machine.
const START_TIMEOUT_MS = 15_000;
const STEP_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 15_000;
const TEST_TIMEOUT_MS = 60_000;
const MISSED = 3;

const NAMESPACE = {
  name: 'fb',
  history_size: 100,
  history_ttl: '300s',
  force_recovery: true,
  allow_subscribe_for_client: true,
  allow_publish_for_subscriber: true,
};

let site; // the page server
let herald;
let config;
let tmp;
let context;

before(async () => {
  if (skipBrowser) return;
  requireChromium();
  site = await startPageServer();
  // On Redis the channel streams outlive a node, so a restarted node can
  // recover; a prefix of its own keeps other runs' channels apart.
  assert.ok(redisAddr || !requireServices, 'HERALD_TEST_REDIS_ADDR must be set when HERALD_TEST_REQUIRE_SERVICES=1');
  const engine = redisAddr ? { engine: redisEngine(uniqueName('herald_fallback')) } : {};
  config = transportConfig({
    ...engine,
    // The page is on another origin: WebSocket checks it, and the HTTP
    // transports answer it with CORS headers.
    websocket: { allowed_origins: [site.origin] },
    shutdown: { drain_window: '200ms' },
    channel: { namespaces: [NAMESPACE] },
  });
  herald = await startHerald(config);
  tmp = mkdtempSync(path.join(os.tmpdir(), 'herald-fallback-'));
  context = await launchBrowser(path.join(tmp, 'profile'), { timeout: START_TIMEOUT_MS });
});

after(async () => {
  if (context) {
    await withTimeout(context.close(), STOP_TIMEOUT_MS, 'closing Chromium').catch(() => {});
  }
  await herald?.stop();
  await site?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/**
 * endpoints lists the page's transports on the node at port; the ones in
 * broken get a path the node does not serve.
 */
function endpoints(port, broken = []) {
  const at = (transport) => {
    const scheme = transport === 'websocket' ? 'ws' : 'http';
    const p = broken.includes(transport) ? `/connection/broken_${transport}` : PATHS[transport];
    return { transport, endpoint: `${scheme}://127.0.0.1:${port}${p}` };
  };
  return ['websocket', 'http_stream', 'sse'].map(at);
}

/**
 * startPage opens the page (kept in pages, for the screenshots) and starts
 * a client with the given transports on channel, with the SDK's JSON or
 * Protobuf build.
 */
async function startPage(pages, transports, channel, { protobuf = false, origin = site.origin } = {}) {
  const page = await openPage(context, `${origin}/${protobuf ? 'protobuf' : ''}`, STEP_TIMEOUT_MS);
  pages.push(page);
  const options = {
    token: connectionToken(`browser-${channel}`),
    emulationEndpoint: `${httpBase(herald.port)}${PATHS.emulation}`,
    minReconnectDelay: 100,
    maxReconnectDelay: 1000,
    timeout: 5000,
  };
  await page.evaluate(({ transports, options, channel }) => window.start(transports, options, channel), {
    transports,
    options,
    channel,
  });
  return page;
}

/**
 * browserTest runs body(t, pages) as a bounded test; when it fails, every
 * page it opened is kept as a screenshot before the pages close.
 */
function browserTest(name, body) {
  test(name, { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const pages = [];
    try {
      await body(t, pages);
    } catch (err) {
      for (const [n, page] of pages.entries()) await screenshot(t, page, n);
      throw err;
    } finally {
      for (const page of pages) await page.close().catch(() => {});
    }
  });
}

/** screenshot keeps the n-th page's picture and event list in .tmp/logs/. */
async function screenshot(t, page, n) {
  try {
    mkdirSync(LOGS, { recursive: true });
    const file = path.join(LOGS, `fallback-${t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}-${n}.png`);
    await page.screenshot({ path: file, fullPage: true });
    t.diagnostic(`screenshot: ${file}`);
  } catch (err) {
    t.diagnostic(`no screenshot: ${err.message}`);
  }
}

/**
 * waitFor waits until the page has recorded an event that matches `match`
 * (field values, compared as JSON) and returns it; on timeout the error
 * lists the page's last events.
 */
async function waitFor(page, match, timeout = STEP_TIMEOUT_MS) {
  try {
    const handle = await page.waitForFunction(
      (m) => window.events.find((e) => Object.entries(m).every(([k, v]) => JSON.stringify(e[k]) === JSON.stringify(v))),
      match,
      { timeout },
    );
    return await handle.jsonValue();
  } catch (err) {
    // The last events say what the client was doing; a long reconnect loop
    // would drown the message.
    const events = await page.evaluate(() => window.events.slice(-12)).catch(() => 'unreadable');
    throw new Error(`no event ${JSON.stringify(match)} on the page; its last events: ${JSON.stringify(events)}: ${err.message}`);
  }
}

/** failedTransports lists the transports whose attempts failed, in order. */
async function failedTransports(page) {
  return (await eventsOf(page, 'error')).filter((e) => e.type === 'transport').map((e) => e.transport);
}

/** eventsOf returns the page's recorded events of kind. */
function eventsOf(page, kind) {
  return page.evaluate((k) => window.events.filter((e) => e.kind === k), kind);
}

const publish = (channel, n) => api(herald.port, 'publish', { channel, data: { n } });

describe('transport fallback in Chromium', { skip: skipBrowser }, () => {
  browserTest('connects over WebSocket when it works', async (t, pages) => {
    const channel = 'fb:websocket';
    const page = await startPage(pages, endpoints(herald.port), channel);
    await waitFor(page, { kind: 'connected', transport: 'websocket' });
    await waitFor(page, { kind: 'subscribed' });
    await publish(channel, 1);
    await waitFor(page, { kind: 'publication', data: { n: 1 } });
    assert.deepEqual(await eventsOf(page, 'error'), [], 'no transport failed');
    assert.deepEqual(page.errors, [], 'no script errors on the page');
  });

  browserTest('falls back to http_stream when WebSocket fails', async (t, pages) => {
    const channel = 'fb:http-stream';
    const page = await startPage(pages, endpoints(herald.port, ['websocket']), channel);
    await waitFor(page, { kind: 'connected', transport: 'http_stream' });
    await waitFor(page, { kind: 'subscribed' });
    assert.deepEqual(await failedTransports(page), ['websocket'], 'the WebSocket attempt failed first');
    await publish(channel, 1);
    await waitFor(page, { kind: 'publication', data: { n: 1 } });
    assert.deepEqual(page.errors, [], 'no script errors on the page');
  });

  browserTest('a page from an origin that is not allowed connects over no transport', async (t, pages) => {
    // The same page server under another name: http://localhost:<port> is
    // not in websocket.allowed_origins, which the HTTP transports follow too.
    const origin = site.origin.replace('127.0.0.1', 'localhost');
    const page = await startPage(pages, endpoints(herald.port), 'fb:refused', { origin });
    // Every transport is tried and refused, and the SDK goes on retrying
    // (the HTTP ones: centrifuge-js 5.7 does not go back to a WebSocket
    // that failed before any transport opened). Wait for SSE, the last,
    // to be refused on two attempts (each reports its failure twice).
    await page.waitForFunction(
      () => new Set(window.events.filter((e) => e.kind === 'error' && e.transport === 'sse').map((e) => e.at)).size >= 2,
      null,
      { timeout: STEP_TIMEOUT_MS },
    );
    const failed = await failedTransports(page);
    assert.deepEqual([...new Set(failed.slice(0, 3))], ['websocket', 'http_stream', 'sse']);
    assert.deepEqual(await eventsOf(page, 'connected'), [], 'never connected');
  });

  browserTest('the Protobuf build falls back to http_stream, binary both ways', async (t, pages) => {
    const channel = 'fb:protobuf';
    const page = await startPage(pages, endpoints(herald.port, ['websocket']), channel, { protobuf: true });
    await waitFor(page, { kind: 'connected', transport: 'http_stream' });
    await waitFor(page, { kind: 'subscribed' });
    assert.deepEqual(await failedTransports(page), ['websocket']);
    await publish(channel, 1);
    await waitFor(page, { kind: 'publication', data: { n: 1 } });
    // Up too: the page publishes bytes over the emulation endpoint (a
    // cross-origin application/octet-stream POST, preflighted).
    await page.evaluate((ch) => window.client.publish(ch, new TextEncoder().encode(JSON.stringify({ n: 2 }))), channel);
    await waitFor(page, { kind: 'publication', data: { n: 2 } });
    assert.deepEqual(page.errors, [], 'no script errors on the page');
  });

  browserTest('falls back to sse when WebSocket and http_stream fail, and recovers after the node restarts', async (t, pages) => {
    const channel = 'fb:sse';
    const page = await startPage(pages, endpoints(herald.port, ['websocket', 'http_stream']), channel);
    await waitFor(page, { kind: 'connected', transport: 'sse' });
    await waitFor(page, { kind: 'subscribed' });
    assert.deepEqual(await failedTransports(page), ['websocket', 'http_stream'], 'both other transports were tried, in order, and failed');
    await publish(channel, 1);
    await waitFor(page, { kind: 'publication', data: { n: 1 } });

    // Stop the node: it drains the page's connection with 3001, and the
    // page keeps trying the same port.
    const port = herald.port;
    await herald.stop();
    await waitFor(page, { kind: 'connecting', code: 3001 });

    // On Redis a second node publishes what the page misses meanwhile.
    let other;
    if (redisAddr) {
      other = await startHerald(config);
      t.after(() => other.stop());
      for (let n = 2; n < 2 + MISSED; n++) await api(other.port, 'publish', { channel, data: { n } });
    }

    herald = await startHerald(config, { port });
    const marker = 2 + MISSED;
    // Resubscribed after the restart: the second 'subscribed' event.
    await page.waitForFunction(() => window.events.filter((e) => e.kind === 'subscribed').length >= 2, null, {
      timeout: STEP_TIMEOUT_MS,
    });
    const connected = await eventsOf(page, 'connected');
    assert.deepEqual(
      connected.map((e) => e.transport),
      ['sse', 'sse'],
      'the page came back on SSE',
    );
    await publish(channel, marker);
    await waitFor(page, { kind: 'publication', data: { n: marker } });
    const [, resubscribed] = await eventsOf(page, 'subscribed');
    const got = (await eventsOf(page, 'publication')).map((e) => e.data.n);
    if (redisAddr) {
      assert.equal(resubscribed.wasRecovering, true);
      assert.equal(resubscribed.recovered, true, 'the stream outlived the node on Redis');
      assert.deepEqual(got, Array.from({ length: marker }, (_, i) => i + 1), 'the missed publications, once each, in order');
    } else {
      assert.deepEqual(got, [1, marker], 'the memory engine lost the stream: only live publications');
    }
    assert.deepEqual(page.errors, [], 'no script errors on the page');
  });
});
