// The gRPC proxy against a real backend: centrifuge-js clients connect
// without tokens, subscribe, publish and call RPC, all decided by a gRPC
// backend generated from Centrifugo's proxy.proto (the Python one of
// tests/python/grpc_proxy_backend.py, generated at test time with
// grpcio-tools from the repository's copy of proxy.proto). Then the backend
// hangs past the timeout and is killed. A subscribe-stream namespace gets its
// publications from the backend's SubscribeUnidirectional stream.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import WebSocket from 'ws';

import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { freePort, startHerald } from './lib/herald.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BACKEND = path.join(repoRoot, 'tests', 'python', 'grpc_proxy_backend.py');
const PROTO_DIR = path.join(repoRoot, 'proxy', 'proxyproto');
// The codes grpc_proxy_backend.py answers with.
const CODES = { subscribeDenied: 403, publishDenied: 1403, rpcError: 1500, noUser: 4501 };
const PROXY_TIMEOUT_MS = 1000;
const START_MS = 10_000;

/**
 * python is the interpreter with grpcio-tools: HERALD_PYTHON, or the test
 * command's virtualenv (.tmp/venv, made from tests/python/requirements.txt).
 */
function findPython() {
  const candidates = [process.env.HERALD_PYTHON, path.join(repoRoot, '.tmp', 'venv', 'bin', 'python')];
  for (const py of candidates) {
    if (py && existsSync(py) && spawnSync(py, ['-c', 'import grpc_tools'], { encoding: 'utf8' }).status === 0) {
      return py;
    }
  }
  return undefined;
}

const python = findPython();
const noPython =
  !python && !process.env.HERALD_TEST_REQUIRE_SERVICES
    ? 'no Python with grpcio-tools: set HERALD_PYTHON or make .tmp/venv from tests/python/requirements.txt'
    : false;

/** The backend process, on a fixed port so that it can be restarted. */
class Backend {
  constructor(genDir, port) {
    this.genDir = genDir;
    this.port = port;
    this.endpoint = `grpc://127.0.0.1:${port}`;
  }

  async start() {
    this.proc = spawn(python, [BACKEND, this.genDir, String(this.port)], { stdio: ['ignore', 'pipe', 'inherit'] });
    this.exited = new Promise((resolve) => this.proc.once('exit', resolve));
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the gRPC backend did not start')), START_MS);
      this.proc.stdout.once('data', (chunk) => {
        clearTimeout(timer);
        if (chunk.toString().trim() === 'ready') resolve();
        else reject(new Error(`the gRPC backend said ${chunk}`));
      });
    });
  }

  async kill() {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGKILL');
      await this.exited;
    }
  }
}

function config(endpoint) {
  const events = ['connect', 'refresh', 'subscribe', 'publish', 'sub_refresh', 'rpc'];
  return {
    proxies: events.map((name) => ({
      name,
      endpoint,
      timeout: `${PROXY_TIMEOUT_MS}ms`,
      http_headers: ['X-User'],
      grpc: { credentials_key: 'x-backend-key', credentials_value: 'js-grpc-secret' },
    })),
    client: { proxy: { connect: 'connect', refresh: 'refresh' } },
    rpc: { proxy: 'rpc' },
    channel: {
      namespaces: [
        { name: 'px', subscribe_proxy: 'subscribe', publish_proxy: 'publish', sub_refresh_proxy: 'sub_refresh' },
        { name: 'stream', subscribe_stream_proxy: 'subscribe' },
      ],
    },
  };
}

/** withHeaders is a ws class that sends headers with the upgrade request. */
function withHeaders(headers) {
  return class extends WebSocket {
    constructor(url, protocols) {
      super(url, protocols, { headers });
    }
  };
}

describe('gRPC proxy to a real backend generated from proxy.proto', { skip: noPython }, () => {
  let genDir;
  let backend;
  let node;
  const clients = [];
  const track = (options) => {
    const c = newClient(node.url, options);
    clients.push(c);
    return c;
  };
  const user = (name) => ({ data: { user: name } });

  before(async () => {
    assert.ok(python, 'HERALD_TEST_REQUIRE_SERVICES is set: a Python with grpcio-tools is required');
    genDir = mkdtempSync(path.join(os.tmpdir(), 'herald-proxyproto-'));
    const gen = spawnSync(
      python,
      ['-m', 'grpc_tools.protoc', `-I${PROTO_DIR}`, `--python_out=${genDir}`, `--grpc_python_out=${genDir}`, 'proxy.proto'],
      { encoding: 'utf8' },
    );
    assert.equal(gen.status, 0, `grpc_tools.protoc: ${gen.stderr}`);
    backend = new Backend(genDir, await freePort());
    await backend.start();
    node = await startHerald(config(backend.endpoint));
  });

  after(async () => {
    for (const c of clients) c.disconnect();
    await node?.stop();
    await backend?.kill();
    if (genDir) rmSync(genDir, { recursive: true, force: true });
  });

  test('connect without a token: the backend names the user from the data or the X-User header, or refuses', async () => {
    const carol = track(user('carol'));
    const ctx = await connect(carol);
    assert.deepEqual(ctx.data, { welcome: 'carol', client: ctx.client, transport: 'websocket' });

    const bob = track({ websocket: withHeaders({ 'X-User': 'bob' }) });
    assert.equal((await connect(bob)).data.welcome, 'bob');

    const nobody = track();
    const disconnected = waitEvent(nobody, 'disconnected');
    nobody.connect();
    const gone = await disconnected;
    assert.equal(gone.code, CODES.noUser, `disconnect ${gone.code} (${gone.reason})`);
  });

  test('subscribe, publish (as sent, rewritten, denied) and rpc decided by the backend', async () => {
    const alice = track(user('alice'));
    const bob = track(user('bob'));
    await Promise.all([connect(alice), connect(bob)]);

    const room = bob.newSubscription('px:js-room');
    const roomPubs = new EventLog(room, 'publication');
    assert.deepEqual((await subscribe(room)).data, { initial: 'px:js-room', user: 'bob' });
    const rewrite = bob.newSubscription('px:py-rewrite');
    const rewritePubs = new EventLog(rewrite, 'publication');
    await subscribe(rewrite);

    const denied = alice.newSubscription('px:py-denied');
    const unsubscribed = waitEvent(denied, 'unsubscribed');
    denied.subscribe();
    assert.equal((await unsubscribed).code, CODES.subscribeDenied);

    await alice.publish('px:js-room', { text: 'hi' });
    assert.deepEqual((await roomPubs.count(1))[0].data, { text: 'hi' });
    await alice.publish('px:py-rewrite', { text: 'raw' });
    assert.deepEqual((await rewritePubs.count(1))[0].data, { original: { text: 'raw' }, rewritten: true, by: 'alice' });
    await assert.rejects(alice.publish('px:py-readonly', { text: 'no' }), (err) => {
      assert.equal(err.code, CODES.publishDenied, JSON.stringify(err));
      return true;
    });

    const res = await alice.rpc('echo', { n: 1 });
    assert.deepEqual(res.data, { data: { n: 1 }, user: 'alice', secret: 'js-grpc-secret' });
    await assert.rejects(alice.rpc('error', {}), (err) => {
      assert.equal(err.code, CODES.rpcError, JSON.stringify(err));
      return true;
    });
  });

  test('a subscribe stream: the backend feeds the subscription its own publications', async () => {
    const mia = track(user('mia'));
    await connect(mia);
    const sub = mia.newSubscription('stream:js-feed');
    const pubs = new EventLog(sub, 'publication');
    assert.deepEqual((await subscribe(sub)).data, { stream: 'stream:js-feed', user: 'mia' });
    const got = await pubs.count(3);
    assert.deepEqual(
      got.map((p) => p.data),
      [{ n: 1 }, { n: 2 }, { n: 3 }],
    );
  });

  test('a backend hanging past the timeout: error 100 for that call, another client answered meanwhile', async () => {
    const kim = track(user('kim'));
    const lee = track(user('lee'));
    await Promise.all([connect(kim), connect(lee)]);
    const started = Date.now();
    let hungDone = false;
    const hung = kim.rpc('hang', {}).finally(() => {
      hungDone = true;
    });
    assert.deepEqual((await lee.rpc('echo', 'quick')).data.data, 'quick');
    assert.equal(hungDone, false, "the hanging call ended before the other client's");
    await assert.rejects(hung, (err) => {
      assert.equal(err.code, 100, JSON.stringify(err));
      return true;
    });
    assert.ok(Date.now() - started >= PROXY_TIMEOUT_MS - 100, 'the hanging call failed before the timeout');
    assert.equal(kim.state, 'connected');
  });

  test('the backend killed: error 100, no client let in; served again once it is back', async () => {
    const ivy = track(user('ivy'));
    await connect(ivy);
    await backend.kill();

    await assert.rejects(ivy.rpc('echo', {}), (err) => {
      assert.equal(err.code, 100, JSON.stringify(err));
      return true;
    });
    assert.equal(ivy.state, 'connected');
    const jay = track(user('jay'));
    const failed = waitEvent(jay, 'error', { filter: (ctx) => ctx.type === 'connect' });
    const connected = waitEvent(jay, 'connected', { timeoutMs: 20_000 });
    jay.connect();
    assert.equal((await failed).error.code, 100);
    assert.notEqual(jay.state, 'connected');

    await backend.start();
    await connected;
    assert.equal((await jay.rpc('echo', 'back')).data.data, 'back');
  });
});
