// The quickstart example (examples/quickstart) as a newcomer runs it: Herald
// with the example's herald.yaml, the Node backend (server.mjs), and two
// pages in headless Chromium, driven through playwright-core. One user's
// message goes through the backend's POST /say and Herald's server API and
// shows live on the other page; presence shows both; a reloaded page shows
// the message again from history. A screenshot is kept in .tmp/logs/.
//
// Chromium is the system's (/usr/bin/chromium, or HERALD_CHROMIUM):
// playwright-core downloads no browser. Without it the test is skipped, or
// fails when HERALD_TEST_REQUIRE_SERVICES=1 (as in scripts/test.sh, which
// also installs the example's npm packages).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

import { freePort, heraldBinary } from './lib/herald.mjs';
import { launchBrowser, openPage, requireChromium, signIn, skipBrowser, waitWho, withTimeout } from './lib/browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const example = path.join(repoRoot, 'examples', 'quickstart');
const LOGS = path.join(repoRoot, '.tmp', 'logs');
const SCREENSHOT = path.join(LOGS, 'quickstart.png');

// Every wait is bounded; generous for a loaded 2-core machine.
const BUILD_TIMEOUT_MS = 300_000;
const START_TIMEOUT_MS = 15_000;
const STEP_TIMEOUT_MS = 15_000;
// Herald's shutdown drains clients over shutdown.drain_window (5s).
const STOP_TIMEOUT_MS = 15_000;
const LOG_LIMIT = 64 * 1024;


/**
 * start runs a process and resolves once its output matches ready (with
 * the match), or rejects if it exits or takes over START_TIMEOUT_MS.
 */
function start(name, cmd, args, env, ready) {
  const proc = spawn(cmd, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const p = { name, proc, log: '' };
  p.exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  // If the test process dies first, the child must not outlive it.
  p.killOnExit = () => proc.kill('SIGKILL');
  process.once('exit', p.killOnExit);
  p.started = new Promise((resolve, reject) => {
    const fail = (why) => {
      clearTimeout(timer);
      reject(new Error(`${name} ${why}:\n${p.log}`));
    };
    const timer = setTimeout(() => fail(`did not start within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    p.exited.then(({ code, signal }) => fail(`exited (${code ?? signal}) before it was ready`));
    const keep = (chunk) => {
      p.log = (p.log + chunk.toString()).slice(-LOG_LIMIT);
      const m = ready.exec(p.log);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    proc.stdout.on('data', keep);
    proc.stderr.on('data', keep);
  });
  return p;
}

/** stop sends SIGTERM and waits for the exit, SIGKILLing a hung process. */
async function stop(p) {
  if (p.proc.exitCode === null && p.proc.signalCode === null) {
    p.proc.kill('SIGTERM');
  }
  const timer = setTimeout(() => p.proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
  const exit = await p.exited;
  clearTimeout(timer);
  process.off('exit', p.killOnExit);
  return exit;
}

/**
 * startExample starts the backend on a free port and Herald with the
 * example's herald.yaml, its address and allowed origin moved by HERALD_
 * variables to the ports of this run. Another process may take Herald's
 * probed port before it binds it: then both start again on new ports.
 */
async function startExample(herald) {
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const heraldPort = await freePort();
    const backend = start(
      'backend',
      process.execPath,
      [path.join(example, 'server.mjs')],
      { QUICKSTART_PORT: '0', QUICKSTART_HERALD_URL: `http://127.0.0.1:${heraldPort}` },
      /listening on (http:\/\/\S+)/,
    );
    let node;
    try {
      const url = (await backend.started)[1];
      node = start(
        'herald',
        herald,
        ['serve', '--config', path.join(example, 'herald.yaml')],
        {
          HERALD_ADDRESS: `127.0.0.1:${heraldPort}`,
          // The page's origin: the backend's address without the path.
          HERALD_WEBSOCKET_ALLOWED_ORIGINS: new URL(url).origin,
        },
        /herald listening/,
      );
      await node.started;
      return { backend, herald: node, url };
    } catch (err) {
      lastError = err;
      await stop(backend);
      if (node) await stop(node);
    }
  }
  throw lastError;
}





/**
 * waitMessage waits until the page shows the message line text, live or
 * (with history) loaded from the channel's history.
 */
async function waitMessage(page, text, { history = false } = {}) {
  const exactly = new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  const selector = history ? '#messages li.history' : '#messages li:not(.history)';
  try {
    await page.locator(selector).filter({ hasText: exactly }).waitFor();
  } catch (err) {
    const shown = await page.locator('#messages li').evaluateAll((lis) => lis.map((li) => `${li.className}|${li.textContent}`));
    throw new Error(`no ${history ? 'history' : 'live'} message ${JSON.stringify(text)} among ${JSON.stringify(shown)}: ${err.message}`);
  }
}

const TEST_TIMEOUT_MS = BUILD_TIMEOUT_MS + 120_000;

test('the quickstart: a message through the backend, live, presence and history', { skip: skipBrowser, timeout: TEST_TIMEOUT_MS }, async (t) => {
  requireChromium();
  for (const pkg of ['centrifuge', 'jose']) {
    assert.ok(
      existsSync(path.join(example, 'node_modules', pkg)),
      `no ${pkg} in examples/quickstart/node_modules: run npm ci in examples/quickstart (scripts/test.sh does)`,
    );
  }

  const tmp = mkdtempSync(path.join(os.tmpdir(), 'herald-quickstart-'));
  t.after(() => rmSync(tmp, { recursive: true, force: true }));
  const { backend, herald, url } = await startExample(heraldBinary());
  let context;
  let passed = false;
  try {
    // The backend refuses a message without the token that names its user.
    const anonymous = await fetch(new URL('/say', url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'who am I?' }),
      signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
    });
    assert.equal(anonymous.status, 401, 'POST /say without a token');

    // A fresh profile; no network but the example's own (the page loads
    // centrifuge-js from the backend, never from a CDN).
    context = await launchBrowser(path.join(tmp, 'profile'), { timeout: START_TIMEOUT_MS });

    const alice = await openPage(context, url, STEP_TIMEOUT_MS);
    const bob = await openPage(context, url, STEP_TIMEOUT_MS);
    for (const page of [alice, bob]) {
      const loaded = await page.evaluate(() => typeof Centrifuge === 'function');
      assert.ok(loaded, 'the page loaded centrifuge-js from /centrifuge.js');
    }

    await signIn(alice, 'alice');
    await waitWho(alice, ['alice'], STEP_TIMEOUT_MS);
    await signIn(bob, 'bob');
    // Presence on subscribe for bob, a join event for alice.
    await waitWho(bob, ['alice', 'bob'], STEP_TIMEOUT_MS);
    await waitWho(alice, ['alice', 'bob'], STEP_TIMEOUT_MS);

    // alice's message goes to the backend, which publishes it through
    // Herald's API; Herald delivers it to both pages.
    await alice.locator('#text').fill('hello from alice');
    await alice.locator('#say button').click();
    await waitMessage(bob, 'alice: hello from alice');
    await waitMessage(alice, 'alice: hello from alice');
    // The input is cleared once the backend published the message.
    await alice.waitForFunction(() => document.getElementById('text').value === '', null, { timeout: STEP_TIMEOUT_MS });
    assert.equal(await alice.locator('#error').textContent(), '', 'no error shown on alice\'s page');

    // bob reloads: the tab keeps his name and signs in again; the message
    // comes back from the channel's history.
    await bob.reload();
    await bob.locator('#status', { hasText: 'Signed in as bob.' }).waitFor();
    await waitMessage(bob, 'alice: hello from alice', { history: true });
    await waitWho(bob, ['alice', 'bob'], STEP_TIMEOUT_MS);
    await waitWho(alice, ['alice', 'bob'], STEP_TIMEOUT_MS);

    // A live message after the reload lands after the history.
    await bob.locator('#text').fill('hi alice');
    await bob.locator('#text').press('Enter');
    await waitMessage(alice, 'bob: hi alice');
    await waitMessage(bob, 'bob: hi alice');
    assert.deepEqual(
      await bob.locator('#messages li').allTextContents(),
      ['alice: hello from alice', 'bob: hi alice'],
      'bob\'s page shows the history, then the live message',
    );

    mkdirSync(LOGS, { recursive: true });
    await bob.screenshot({ path: SCREENSHOT, fullPage: true });
    t.diagnostic(`screenshot: ${SCREENSHOT}`);
    console.log(`quickstart screenshot: ${SCREENSHOT}`);

    assert.deepEqual(alice.errors, [], 'no script errors on alice\'s page');
    assert.deepEqual(bob.errors, [], 'no script errors on bob\'s page');
    passed = true;
  } finally {
    if (context) {
      await withTimeout(context.close(), STOP_TIMEOUT_MS, 'closing Chromium').catch((err) => t.diagnostic(err.message));
    }
    const backendExit = await stop(backend);
    const heraldExit = await stop(herald);
    // SIGTERM is the normal way to stop both: they exit cleanly. (Checked
    // only when the rest passed, not to hide the first failure.)
    if (passed) {
      assert.equal(backendExit.code, 0, `backend exit ${JSON.stringify(backendExit)}:\n${backend.log}`);
      assert.equal(heraldExit.code, 0, `herald exit ${JSON.stringify(heraldExit)}:\n${herald.log}`);
    } else {
      t.diagnostic(`backend log:\n${backend.log}`);
      t.diagnostic(`herald log:\n${herald.log}`);
    }
  }
});
