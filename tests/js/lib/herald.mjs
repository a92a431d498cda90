// Starts a real herald binary for a test file: a temporary YAML config, a
// free loopback port, and a clean stop afterwards.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import jwt from 'jsonwebtoken';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The HMAC key every test server checks tokens with. */
export const SECRET = 'herald-js-test-secret';

const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const LOG_LIMIT = 64 * 1024;

/**
 * heraldBinary returns HERALD_BIN, or builds cmd/herald into a temporary
 * directory when it is unset (running `node --test` by hand).
 */
export function heraldBinary() {
  if (process.env.HERALD_BIN) {
    return process.env.HERALD_BIN;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-bin-'));
  const bin = path.join(dir, 'herald');
  execFileSync('go', ['build', '-o', bin, './cmd/herald'], { cwd: repoRoot, stdio: 'inherit' });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  process.env.HERALD_BIN = bin;
  return bin;
}

/** freePort asks the kernel for a loopback port nobody listens on. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** canConnect reports whether something accepts TCP connections on port. */
function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/**
 * A running herald node. `url` is its WebSocket endpoint; `token` and
 * `subToken` mint JWTs it accepts.
 */
export class Herald {
  constructor(proc, port, dir) {
    this.proc = proc;
    this.port = port;
    this.dir = dir;
    this.url = `ws://127.0.0.1:${port}/connection/websocket`;
    this.exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
    this.log = '';
    const keep = (chunk) => {
      this.log = (this.log + chunk.toString()).slice(-LOG_LIMIT);
    };
    proc.stdout.on('data', keep);
    proc.stderr.on('data', keep);
    // If the test process dies before stop() (a crash, a runner timeout),
    // the node must not outlive it.
    this.killOnExit = () => proc.kill('SIGKILL');
    process.once('exit', this.killOnExit);
  }

  /**
   * api calls the node's server API method with params and the API key,
   * requires HTTP 200 and no error, and resolves with the result.
   */
  async api(key, method, params) {
    const res = await fetch(`http://127.0.0.1:${this.port}/api/${method}`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify(params),
    });
    if (res.status !== 200) throw new Error(`${method}: HTTP ${res.status}`);
    const body = await res.json();
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    return body.result;
  }

  /** stop sends SIGTERM, waits for the exit, and SIGKILLs a hung process. */
  async stop() {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await this.exited;
      clearTimeout(timer);
    }
    process.off('exit', this.killOnExit);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * connectionToken mints a connection JWT for user; ttlSeconds 0 means no
 * expiry.
 */
export function connectionToken(user, { ttlSeconds = 3600, info } = {}) {
  const claims = { sub: user };
  if (info !== undefined) claims.info = info;
  return jwt.sign(claims, SECRET, { algorithm: 'HS256', ...(ttlSeconds ? { expiresIn: ttlSeconds } : {}) });
}

/** subscriptionToken mints a subscription JWT for user on channel. */
export function subscriptionToken(user, channel, { ttlSeconds = 3600 } = {}) {
  return jwt.sign({ sub: user, channel }, SECRET, {
    algorithm: 'HS256',
    ...(ttlSeconds ? { expiresIn: ttlSeconds } : {}),
  });
}

/**
 * startHerald runs herald serve with config (merged over a token key and
 * warn-level logs) and resolves once it accepts TCP connections. With
 * `port`, it listens there (to restart a node where its clients reconnect)
 * and is tried once.
 */
export async function startHerald(config = {}, { port: fixedPort } = {}) {
  const bin = heraldBinary();
  const full = {
    log: { level: 'warn', format: 'text' },
    ...config,
    // A test's own client.token keys (a JWKS endpoint) are added to the
    // HMAC key every test mints with.
    client: { ...(config.client ?? {}), token: { hmac_secret_key: SECRET, ...(config.client?.token ?? {}) } },
  };
  // Another process may grab the probed port before herald binds it: try
  // again with a new one.
  let lastError;
  for (let attempt = 0; attempt < (fixedPort ? 1 : 3); attempt++) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-js-'));
    const configPath = path.join(dir, 'herald.yaml');
    // JSON is YAML, so no YAML library is needed.
    writeFileSync(configPath, JSON.stringify(full, null, 2));
    const port = fixedPort ?? (await freePort());
    const proc = spawn(bin, ['serve', '--config', configPath, '--address', `127.0.0.1:${port}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const herald = new Herald(proc, port, dir);
    if (config.websocket?.handler_prefix) {
      herald.url = `ws://127.0.0.1:${port}${config.websocket.handler_prefix}`;
    }
    try {
      await waitListening(herald);
      return herald;
    } catch (err) {
      lastError = err;
      await herald.stop();
    }
  }
  throw lastError;
}

export async function waitListening(herald) {
  let exited = false;
  herald.exited.then(() => {
    exited = true;
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited) {
      throw new Error(`herald exited before listening on port ${herald.port}:\n${herald.log}`);
    }
    if (await canConnect(herald.port)) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`herald did not listen on port ${herald.port} within ${START_TIMEOUT_MS} ms:\n${herald.log}`);
}
