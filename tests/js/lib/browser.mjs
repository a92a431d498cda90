// Headless Chromium for the browser tests: the system's (/usr/bin/chromium,
// or HERALD_CHROMIUM), driven through playwright-core, which downloads no
// browser. Without it a test is skipped, or fails when
// HERALD_TEST_REQUIRE_SERVICES=1 (as in scripts/test.sh).
import { existsSync } from 'node:fs';

import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.HERALD_CHROMIUM || '/usr/bin/chromium';

/** noChromium says why Chromium cannot run here, or is null. */
export const noChromium = existsSync(CHROMIUM)
  ? null
  : `no Chromium at ${CHROMIUM}: install it (apt-get install chromium) or set HERALD_CHROMIUM`;

const required = process.env.HERALD_TEST_REQUIRE_SERVICES === '1';

/** skipBrowser is the node:test skip option of a browser test. */
export const skipBrowser = noChromium && !required ? noChromium : false;

/** requireChromium fails a browser test that runs without Chromium. */
export function requireChromium() {
  if (noChromium) {
    throw new Error(`${noChromium} (HERALD_TEST_REQUIRE_SERVICES=1 requires it)`);
  }
}

// The flags of a headless run on a machine with no network but loopback:
// without the background-networking ones Chromium keeps trying to reach
// Google's services.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * launchBrowser starts Chromium with a fresh profile in the folder
 * profile (playwright takes it as the persistent context's, not as a
 * flag) and returns the context; extraArgs are added to the flags.
 */
export function launchBrowser(profile, { timeout, extraArgs = [] }) {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...ARGS, ...extraArgs],
    timeout,
  });
}

/** withTimeout rejects if promise takes longer than ms. */
export function withTimeout(promise, ms, what) {
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** openPage opens url in a new page that records its script errors. */
export async function openPage(context, url, stepTimeout) {
  const page = await context.newPage();
  page.setDefaultTimeout(stepTimeout);
  page.errors = [];
  page.on('pageerror', (err) => page.errors.push(err.message));
  await page.goto(url);
  return page;
}

// The example pages (examples/chat, examples/quickstart) share their
// sign-in form (#name, #login button, #status) and online list (#who li).

/** signIn types a name on an example page and waits until it is in. */
export async function signIn(page, name) {
  await page.locator('#name').fill(name);
  await page.locator('#login button').click();
  await page.locator('#status', { hasText: `Signed in as ${name}.` }).waitFor();
}

/** waitWho waits until an example page's online list is exactly users. */
export async function waitWho(page, users, timeout) {
  try {
    await page.waitForFunction(
      (want) => [...document.querySelectorAll('#who li')].map((li) => li.textContent).join(',') === want,
      users.join(','),
      { timeout },
    );
  } catch (err) {
    const shown = await page.locator('#who li').allTextContents();
    throw new Error(`online list is ${JSON.stringify(shown)}, want ${JSON.stringify(users)}: ${err.message}`);
  }
}
