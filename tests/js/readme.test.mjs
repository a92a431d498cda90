// The README's quick start, run as written: herald is started with the
// README's config, the token is minted with the README's `herald token`
// line, and the Node snippet, the browser snippet (in Debian's Chromium,
// through playwright-core) and the curl command run against it. Only the
// server's URL and the token placeholder are replaced.
//
// Without Chromium the browser test is skipped, or fails when
// HERALD_TEST_REQUIRE_SERVICES=1 (as in scripts/test.sh).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';


import { Herald, freePort, heraldBinary, waitListening } from './lib/herald.mjs';
import { codeBlocks, snippet, substitute } from './lib/snippets.mjs';
import { launchBrowser, requireChromium, skipBrowser } from './lib/browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const README = path.resolve(here, '..', '..', 'README.md');
const CENTRIFUGE_JS = path.join(here, 'node_modules', 'centrifuge', 'dist', 'centrifuge.js');

// The placeholders the README's snippets use, and the address they name.
const WS_PLACEHOLDER = 'ws://localhost:8000/connection/websocket';
const HTTP_PLACEHOLDER = 'http://localhost:8000';
const TOKEN_PLACEHOLDER = '<the JWT>';

// Every wait is bounded; generous for a loaded 2-core machine.
const RUN_TIMEOUT_MS = 20_000;
const STEP_TIMEOUT_MS = 15_000;
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;


const blocks = codeBlocks(README);
const run = promisify(execFile);

/**
 * tokenArgs finds the README's `herald token` command line (however the
 * binary is spelled: `go run ./cmd/herald` or `./herald`) and returns its
 * arguments after `token`, with its trailing comment dropped.
 */
function tokenArgs() {
  const lines = blocks
    .filter((b) => b.lang === 'sh')
    .flatMap((b) => b.code.split('\n'))
    .filter((l) => /herald token\b/.test(l));
  assert.equal(lines.length, 1, `want one "herald token" line in the README, found ${JSON.stringify(lines)}`);
  const words = lines[0].replace(/\s#.*$/, '').trim().split(/\s+/);
  return words.slice(words.indexOf('token') + 1);
}

/** startReadmeHerald runs herald with the README's config on a free port. */
async function startReadmeHerald() {
  const bin = heraldBinary();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-readme-'));
  const config = path.join(dir, 'herald.yaml');
  writeFileSync(config, snippet(blocks, 'config'));
  const port = await freePort();
  const proc = spawn(bin, ['serve', '--config', config, '--address', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const herald = new Herald(proc, port, dir);
  try {
    await waitListening(herald);
  } catch (err) {
    await herald.stop();
    throw err;
  }
  // The token exactly as the README mints it, with this config file.
  const args = tokenArgs().map((a) => (a === 'herald.yaml' ? config : a));
  const { stdout } = await run(bin, ['token', ...args], { timeout: RUN_TIMEOUT_MS });
  herald.jwt = stdout.trim();
  assert.match(herald.jwt, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'herald token printed a JWT');
  return herald;
}

/** curl runs the README's curl command against herald and returns its reply. */
async function curl(herald) {
  const command = substitute(snippet(blocks, 'curl'), { [HTTP_PLACEHOLDER]: `http://127.0.0.1:${herald.port}` });
  const { stdout } = await run('sh', ['-c', command], { timeout: RUN_TIMEOUT_MS });
  return JSON.parse(stdout);
}

let herald;
before(async () => {
  herald = await startReadmeHerald();
});
after(async () => {
  if (herald) await herald.stop();
});

test('the Node snippet runs as pasted into a .mjs file', { timeout: 60_000 }, async (t) => {
  const code = substitute(snippet(blocks, 'node'), {
    [WS_PLACEHOLDER]: herald.url,
    [TOKEN_PLACEHOLDER]: herald.jwt,
  });
  // A directory of its own, whose node_modules are this suite's, as after
  // `npm install centrifuge ws`.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-readme-node-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(path.join(here, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const file = path.join(dir, 'quickstart.mjs');
  writeFileSync(file, code);
  // The snippet disconnects once it has its message, so node exits by
  // itself; the timeout catches a snippet that hangs.
  const { stdout } = await run(process.execPath, [file], { cwd: dir, timeout: RUN_TIMEOUT_MS }).catch((err) => {
    throw new Error(`node quickstart.mjs: ${err.message}\nstdout: ${err.stdout}\nstderr: ${err.stderr}\nherald:\n${herald.log}`);
  });
  assert.match(stdout, /^received \{ text: 'hello' \}$/m);
});

test('the curl command publishes', { timeout: 30_000 }, async () => {
  const reply = await curl(herald);
  assert.ok(reply.result !== undefined && reply.error === undefined, `reply ${JSON.stringify(reply)}`);
});


test('the browser snippet runs in Chromium from another origin', { skip: skipBrowser, timeout: 90_000 }, async (t) => {
  requireChromium();
  assert.ok(existsSync(CENTRIFUGE_JS), `no ${CENTRIFUGE_JS}: run npm ci in tests/js`);
  // The page comes from the dev-server origin the README's config allows;
  // playwright answers its requests, so nothing needs to listen there.
  const origin = /allowed_origins:\s*\[\s*"([^"]+)"/.exec(snippet(blocks, 'config'))?.[1];
  assert.ok(origin, 'the README config lists an allowed origin');
  const html = `<!doctype html>\n<html><head><meta charset="utf-8"><title>quick start</title></head><body>\n${substitute(
    snippet(blocks, 'browser'),
    { [WS_PLACEHOLDER]: herald.url, [TOKEN_PLACEHOLDER]: herald.jwt },
  )}</body></html>\n`;

  const profile = mkdtempSync(path.join(os.tmpdir(), 'herald-readme-chromium-'));
  t.after(() => rmSync(profile, { recursive: true, force: true }));
  const context = await launchBrowser(profile, {
    timeout: START_TIMEOUT_MS,
    extraArgs: [
      // The page's requests are answered by playwright, not fetched from
      // a loopback server, so Chromium cannot tell that the page is local
      // and would block its connection to herald on loopback; a real dev
      // server on localhost is not blocked.
      '--disable-features=LocalNetworkAccessChecks',
    ],
  });
  try {
    await context.route(`${origin}/**`, (route) => {
      const { pathname } = new URL(route.request().url());
      if (pathname === '/centrifuge.js') {
        return route.fulfill({ contentType: 'text/javascript', body: readFileSync(CENTRIFUGE_JS) });
      }
      return route.fulfill({ contentType: 'text/html', body: html });
    });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    // Every `console.log('received', data)` of the page, as data.
    const received = [];
    const waiters = [];
    page.on('console', async (msg) => {
      const args = msg.args();
      if (args.length !== 2 || (await args[0].jsonValue()) !== 'received') return;
      received.push(await args[1].jsonValue());
      for (const w of waiters) w();
    });
    const waitReceived = (want) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (received.some((d) => JSON.stringify(d) === JSON.stringify(want))) {
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `the page did not receive ${JSON.stringify(want)} within ${STEP_TIMEOUT_MS} ms; got ${JSON.stringify(received)}, errors ${JSON.stringify(errors)}\nherald:\n${herald.log}`,
              ),
            ),
          STEP_TIMEOUT_MS,
        );
        waiters.push(check);
        check();
      });

    await page.goto(`${origin}/`);
    await waitReceived({ text: 'hello' });
    // The backend's publication reaches the page too.
    const reply = await curl(herald);
    assert.ok(reply.result !== undefined, `curl reply ${JSON.stringify(reply)}`);
    await waitReceived({ text: 'hello from the backend' });
    assert.deepEqual(errors, [], 'no script errors on the page');
  } finally {
    let timer;
    await Promise.race([
      context.close(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, STOP_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
  }
});
