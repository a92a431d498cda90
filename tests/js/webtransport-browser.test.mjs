// centrifuge-js's webtransport transport in a real headless Chromium (the
// system's, driven by playwright-core): herald serves HTTP/3 with a
// self-signed certificate made here, which the page trusts by its hash
// (WebTransport's serverCertificateHashes, for certificates of at most 14
// days), and the client connects over WebTransport, subscribes, publishes
// and receives its publication, and is disconnected by the server API with
// the code it gave, with the JSON and the Protobuf build of the SDK.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { CHROMIUM, openPage, requireChromium, skipBrowser, withTimeout } from './lib/browser.mjs';
import { startPageServer } from './lib/fallbackpage.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';

const STEP_TIMEOUT_MS = 15_000;
const TEST_TIMEOUT_MS = 60_000;

// The flags of lib/browser.mjs but QUIC on: they turn it off, and
// WebTransport runs over it.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const API_KEY = 'herald-js-webtransport-api-key';

/** api calls a server API method over HTTPS, trusting the test's certificate. */
function api(method, params) {
  return new Promise((resolve, reject) => {
    const req = https.request(`https://127.0.0.1:${herald.port}/api/${method}`, {
      method: 'POST',
      ca: readFileSync(file('tls.crt')),
      headers: { 'Content-Type': 'application/json', 'X-API-Key': API_KEY },
      timeout: STEP_TIMEOUT_MS,
    }, (res) => {
      let body = '';
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => (res.statusCode === 200 && !body.includes('"error"') ? resolve(body) : reject(new Error(`${method}: ${res.statusCode} ${body}`))));
    });
    req.on('error', reject);
    req.end(JSON.stringify(params));
  });
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-js-wt-'));
const file = (name) => path.join(dir, name);

let site;
let herald;
let context;
let certHash;

before(async () => {
  if (skipBrowser) return;
  requireChromium();
  // ECDSA P-256 and 10 days: what serverCertificateHashes accepts.
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', 'tls.key', '-out', 'tls.crt', '-days', '10', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const der = execFileSync('openssl', ['x509', '-in', file('tls.crt'), '-outform', 'der']);
  certHash = [...createHash('sha256').update(der).digest()];
  site = await startPageServer();
  herald = await startHerald({
    tls: { cert_file: file('tls.crt'), key_file: file('tls.key') },
    http: { http3: { enabled: true } },
    webtransport: { enabled: true },
    http_api: { key: API_KEY },
    websocket: { allowed_origins: [site.origin] },
    channel: {
      without_namespace: { allow_subscribe_for_client: true, allow_publish_for_subscriber: true },
    },
  });
  context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    timeout: STEP_TIMEOUT_MS,
  });
});

after(async () => {
  await context?.close();
  await herald?.stop();
  await site?.close();
  rmSync(dir, { recursive: true, force: true });
});

for (const [name, pagePath] of [['json', '/'], ['protobuf', '/protobuf']]) {
  test(`centrifuge-js connects over WebTransport and receives (${name})`, { skip: skipBrowser, timeout: TEST_TIMEOUT_MS }, async () => {
    const page = await openPage(context, site.origin + pagePath, STEP_TIMEOUT_MS);
    try {
      await page.evaluate(({ endpoint, token, hash }) => {
        const value = new Uint8Array(hash);
        // centrifuge-js constructs globalThis.WebTransport with the URL
        // alone: the certificate's hash is added by a subclass put there.
        class PinnedWebTransport extends WebTransport {
          constructor(url, options) {
            super(url, { ...options, serverCertificateHashes: [{ algorithm: 'sha-256', value }] });
          }
        }
        globalThis.WebTransport = PinnedWebTransport;
        window.start([{ transport: 'webtransport', endpoint }], { token }, 'room');
      }, {
        endpoint: `https://127.0.0.1:${herald.port}/connection/webtransport`,
        token: connectionToken('alice'),
        hash: certHash,
      });
      await withTimeout(page.waitForFunction(() => window.events.some((e) => e.kind === 'subscribed')), STEP_TIMEOUT_MS, 'subscribed');
      const connected = await page.evaluate(() => window.events.find((e) => e.kind === 'connected'));
      assert.equal(connected?.transport, 'webtransport');
      await page.evaluate(async (binary) => {
        const data = { via: 'webtransport' };
        await window.client.publish('room', binary ? new TextEncoder().encode(JSON.stringify(data)) : data);
      }, name === 'protobuf');
      await withTimeout(page.waitForFunction(() => window.events.some((e) => e.kind === 'publication' && e.data.via === 'webtransport')),
        STEP_TIMEOUT_MS, 'the publication');
      // The server's disconnect reaches the client as a push on the
      // stream, with its code (the session's close code never does).
      await api('disconnect', { user: 'alice' });
      await withTimeout(page.waitForFunction(() => window.events.some((e) => e.kind === 'disconnected')), STEP_TIMEOUT_MS, 'the disconnect');
      const disconnected = await page.evaluate(() => window.events.find((e) => e.kind === 'disconnected'));
      assert.equal(disconnected.code, 3503);
      assert.deepEqual(page.errors, []);
    } catch (err) {
      const events = await page.evaluate(() => window.events).catch(() => 'unavailable');
      throw new Error(`${err.message}\npage events: ${JSON.stringify(events)}\nherald log: ${herald.log}`);
    } finally {
      await page.close();
    }
  });
}
