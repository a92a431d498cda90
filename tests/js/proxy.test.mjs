// The proxy against a real backend: centrifuge-js clients connect without
// tokens, subscribe, publish, call RPC and stay connected through refresh
// and sub_refresh, all decided by an express application written to
// Centrifugo's proxy documentation (lib/proxybackend.mjs), across two herald
// nodes on PostgreSQL. Then the backend misbehaves: 500, malformed JSON,
// killed, hanging past the timeout; and a 10,000-client reconnect storm
// must not push more calls at it than the node's in-flight limit.
import assert from 'node:assert/strict';
import { fork, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import WebSocket from 'ws';

import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { heraldBinary, startHerald } from './lib/herald.mjs';
import { CODES, EVENTS, startProxyBackend } from './lib/proxybackend.mjs';
import { lockPostgres } from './lib/pglock.mjs';
import { dropSchema } from './lib/psql.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const DSN = process.env.HERALD_TEST_POSTGRES_DSN;
const API_KEY = 'proxy-js-api-key';
// The proxies' timeout; the hanging-backend test waits it out once.
const PROXY_TIMEOUT_MS = 2000;
// Connections and subscriptions the backend makes expire after this many
// seconds, so refresh and sub_refresh run every few seconds.
const SHORT_TTL_SECONDS = 2;
const WAIT_MS = 20_000;
const STORM_CLIENTS = 10_000;
const STORM_IN_FLIGHT = 50;
const STORM_TIMEOUT_MS = 100_000;

/**
 * proxyConfig names one proxy per event, each at its own endpoint of
 * backend, and turns all six on: connect and refresh for every client,
 * rpc globally, subscribe/publish/sub_refresh for the "px" namespace.
 */
function proxyConfig(endpoint) {
  return {
    proxies: EVENTS.map((event) => ({
      name: event,
      endpoint: endpoint(event),
      timeout: `${PROXY_TIMEOUT_MS}ms`,
      http_headers: ['Cookie', 'X-User'],
      static_http_headers: { 'X-Herald-Test': 'proxy' },
      include_connection_meta: true,
    })),
    client: { proxy: { connect: 'connect', refresh: 'refresh' } },
    rpc: { proxy: 'rpc' },
    channel: {
      namespaces: [
        { name: 'px', subscribe_proxy: 'subscribe', publish_proxy: 'publish', sub_refresh_proxy: 'sub_refresh' },
      ],
    },
  };
}

/** stormConfig proxies connect only, with a low in-flight limit. */
function stormConfig(endpoint) {
  return {
    proxies: [{ name: 'connect', endpoint: endpoint('connect'), timeout: '5s' }],
    proxy_max_in_flight: STORM_IN_FLIGHT,
    client: { proxy: { connect: 'connect' } },
    // 10,000 connections from one address, all at once.
    websocket: { max_unauthenticated: -1, ip_rate_limit: -1 },
  };
}

/**
 * missingProxy runs `herald config check` on a proxy configuration and
 * returns why the tests must be skipped (this herald has no proxy), or
 * false. Any other problem with the configuration fails the file.
 */
function missingProxy(config) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-proxy-check-'));
  try {
    const file = path.join(dir, 'herald.yaml');
    writeFileSync(file, JSON.stringify(config));
    const res = spawnSync(heraldBinary(), ['config', 'check', file], { encoding: 'utf8' });
    if (res.status === 0) return false;
    const out = `${res.stdout}${res.stderr}`.trim();
    if (/unknown key/.test(out)) return `this herald has no proxy configuration yet (${out.replace(/\s*\n\s*/g, '; ')})`;
    throw new Error(`herald config check refused the proxy test configuration:\n${out}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const placeholder = (event) => `http://127.0.0.1:9/centrifugo/${event}`;
const noProxy = missingProxy(proxyConfig(placeholder));
const noStorm = noProxy || missingProxy(stormConfig(placeholder));
const noServices =
  !DSN && !process.env.HERALD_TEST_REQUIRE_SERVICES
    ? 'HERALD_TEST_POSTGRES_DSN is not set: eval "$(scripts/services.sh env)"'
    : false;

/** withHeaders is a ws class that sends headers with the upgrade request. */
function withHeaders(headers) {
  return class extends WebSocket {
    constructor(url, protocols) {
      super(url, protocols, { headers });
    }
  };
}

/**
 * callLog records the backend's calls of one event that pass filter, so a
 * test can await the n-th one without missing any.
 */
function callLog(backend, event, filter) {
  const relay = new EventEmitter();
  const log = new EventLog(relay, 'call');
  const onCall = (req) => {
    if (filter(req.body)) relay.emit('call', req);
  };
  backend.on(event, onCall);
  log.stop = () => backend.off(event, onCall);
  return log;
}

/** apiPublish publishes through a node's HTTP API, past every proxy. */
async function apiPublish(node, channel, data) {
  const res = await fetch(`http://127.0.0.1:${node.port}/api/publish`, {
    method: 'POST',
    headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ channel, data }),
    signal: AbortSignal.timeout(WAIT_MS),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.error, undefined, JSON.stringify(body));
}

describe('proxy to a real backend, two nodes on PostgreSQL', { skip: noProxy || noServices }, () => {
  let backend;
  let nodeA;
  let nodeB;
  let pgLock;
  const schema = `herald_proxy_js_${randomBytes(6).toString('hex')}`;
  const clients = [];

  /** track makes a client that the file's after hook disconnects. */
  const track = (url, options) => {
    const c = newClient(url, options);
    clients.push(c);
    return c;
  };

  const user = (name, extra = {}) => ({ data: { user: name, ...extra } });

  before(async () => {
    assert.ok(DSN, 'HERALD_TEST_POSTGRES_DSN must be set when HERALD_TEST_REQUIRE_SERVICES is');
    pgLock = await lockPostgres('proxy.test.mjs');
    backend = await startProxyBackend({ refreshTTL: SHORT_TTL_SECONDS, subTTL: SHORT_TTL_SECONDS });
    const node = (name) =>
      startHerald({
        name,
        ...proxyConfig((e) => backend.endpoint(e)),
        engine: { type: 'postgres', postgres: { dsn: DSN, schema } },
        http_api: { key: API_KEY },
      });
    // One after the other: the first creates the schema.
    nodeA = await node('proxy-js-a');
    nodeB = await node('proxy-js-b');
  });

  after(async () => {
    for (const c of clients) c.disconnect();
    await nodeA?.stop();
    await nodeB?.stop();
    await backend?.stop();
    if (DSN) dropSchema(DSN, schema);
    pgLock?.release();
  });

  test('connect without a token: the backend names the user from the connect data, or refuses', async () => {
    const carol = track(nodeA.url, user('carol', { device: 'cli' }));
    const ctx = await connect(carol);
    assert.deepEqual(ctx.data, { welcome: 'carol', client: ctx.client, transport: 'websocket' });
    const req = backend.requests.connect.find((r) => r.body.client === ctx.client);
    assert.ok(req, 'the backend saw the connect of this client id');
    assert.equal(req.body.transport, 'websocket');
    assert.equal(req.body.protocol, 'json');
    assert.equal(req.body.encoding, 'json');
    assert.equal(req.body.user, undefined);
    assert.deepEqual(req.body.data, { user: 'carol', device: 'cli' });
    assert.equal(req.headers['x-herald-test'], 'proxy', 'static headers are sent');
    assert.match(req.headers['content-type'], /^application\/json/);

    // No user: the backend answers with a disconnect, which ends the client.
    const nobody = track(nodeB.url);
    const disconnected = waitEvent(nobody, 'disconnected');
    nobody.connect();
    const gone = await disconnected;
    assert.equal(gone.code, CODES.unauthorized, `disconnect ${gone.code} (${gone.reason})`);
    assert.equal(nobody.state, 'disconnected');
  });

  test('connect without a token: the Cookie and X-User headers of the upgrade request reach the backend', async () => {
    const byCookie = track(nodeA.url, { websocket: withHeaders({ Cookie: 'theme=dark; user=alice' }) });
    const ctx = await connect(byCookie);
    assert.equal(ctx.data.welcome, 'alice');
    const req = backend.requests.connect.find((r) => r.body.client === ctx.client);
    assert.match(req.headers.cookie, /user=alice/, 'the Cookie header is forwarded');

    const byHeader = track(nodeB.url, { websocket: withHeaders({ 'X-User': 'bob' }) });
    assert.equal((await connect(byHeader)).data.welcome, 'bob');
  });

  test('subscribe: allowed with the backend\'s initial data, denied with the backend\'s error code', async () => {
    const alice = track(nodeA.url, user('alice'));
    const { client } = await connect(alice);
    const room = alice.newSubscription('px:room');
    const ctx = await subscribe(room);
    assert.deepEqual(ctx.data, { initial: 'px:room', user: 'alice' });
    const req = backend.requests.subscribe.find((r) => r.body.client === client && r.body.channel === 'px:room');
    assert.ok(req, 'the backend saw the subscribe');
    assert.equal(req.body.user, 'alice');
    assert.equal(req.body.transport, 'websocket');
    assert.deepEqual(req.body.meta, { user: 'alice', via: 'proxybackend' }, 'include_connection_meta sends meta');

    const denied = alice.newSubscription('px:denied');
    const unsubscribed = waitEvent(denied, 'unsubscribed');
    denied.subscribe();
    const u = await unsubscribed;
    assert.equal(u.code, CODES.subscribeDenied, `unsubscribed ${u.code} (${u.reason})`);
    assert.equal(denied.state, 'unsubscribed');
    assert.equal(alice.state, 'connected', 'a denied subscription leaves the connection up');
  });

  test('publish on node A reaches a subscriber on node B: allowed as sent, rewritten, or denied', async () => {
    const alice = track(nodeA.url, user('alice'));
    const bob = track(nodeB.url, user('bob'));
    await Promise.all([connect(alice), connect(bob)]);
    const channels = ['px:chat', 'px:rewrite', 'px:readonly'];
    const logs = {};
    for (const ch of channels) {
      const sub = bob.newSubscription(ch);
      logs[ch] = new EventLog(sub, 'publication');
      await subscribe(sub);
      await subscribe(alice.newSubscription(ch));
    }

    await alice.publish('px:chat', { text: 'hi' });
    const [plain] = await logs['px:chat'].count(1);
    assert.deepEqual(plain.data, { text: 'hi' });
    const pubReq = backend.requests.publish.find((r) => r.body.channel === 'px:chat');
    assert.equal(pubReq.body.user, 'alice');
    assert.deepEqual(pubReq.body.data, { text: 'hi' });

    await alice.publish('px:rewrite', { text: 'raw' });
    const [rewritten] = await logs['px:rewrite'].count(1);
    assert.deepEqual(rewritten.data, { original: { text: 'raw' }, rewritten: true, by: 'alice' });

    await assert.rejects(alice.publish('px:readonly', { text: 'no' }), (err) => {
      assert.equal(err.code, CODES.publishDenied, JSON.stringify(err));
      return true;
    });
    // The denied publication never reaches anyone: the first one bob gets
    // on that channel is a marker published after it.
    await apiPublish(nodeA, 'px:readonly', { marker: true });
    const [first] = await logs['px:readonly'].count(1);
    assert.deepEqual(first.data, { marker: true });
  });

  test('rpc: the backend answers echo with the data, user and meta, and error with its code', async () => {
    const dan = track(nodeB.url, user('dan'));
    const { client } = await connect(dan);
    const res = await dan.rpc('echo', { n: 1 });
    assert.deepEqual(res.data, {
      method: 'echo',
      data: { n: 1 },
      user: 'dan',
      meta: { user: 'dan', via: 'proxybackend' },
    });
    const req = backend.requests.rpc.find((r) => r.body.client === client);
    assert.equal(req.body.method, 'echo');

    await assert.rejects(dan.rpc('error', {}), (err) => {
      assert.equal(err.code, CODES.rpcError, JSON.stringify(err));
      return true;
    });
    await assert.rejects(dan.rpc('nope', {}), (err) => {
      assert.equal(err.code, CODES.rpcUnknown, JSON.stringify(err));
      return true;
    });
  });

  test('refresh: an expiring connection stays up because the backend extends it', async () => {
    const erin = track(nodeB.url, user('erin', { ttl: SHORT_TTL_SECONDS }));
    const { client } = await connect(erin);
    const disconnects = new EventLog(erin, 'disconnected');
    const refreshes = callLog(backend, 'refresh', (body) => body.client === client);
    try {
      // The second call comes after the first extension ran out: without
      // it the node would have closed the connection by then, and a
      // reconnect would have a new client id.
      const [first] = await refreshes.count(2, WAIT_MS);
      assert.equal(first.body.user, 'erin');
      assert.equal(first.body.transport, 'websocket');
      assert.deepEqual(first.body.meta, { user: 'erin', via: 'proxybackend' });
    } finally {
      refreshes.stop();
    }
    assert.equal(disconnects.events.length, 0, 'the connection was never closed');
    assert.equal(erin.state, 'connected');
    assert.equal((await erin.rpc('echo', 'still here')).data.data, 'still here');
  });

  test('refresh: a connection the backend lets expire is closed with 3005 and reconnects through the connect proxy', async () => {
    const zed = track(nodeA.url, user('expire-zed', { ttl: SHORT_TTL_SECONDS }));
    const { client } = await connect(zed);
    const refreshed = waitEvent(backend, 'refresh', { filter: (r) => r.body.client === client, timeoutMs: WAIT_MS });
    const lapsed = waitEvent(zed, 'connecting', { timeoutMs: WAIT_MS });
    await refreshed;
    const ctx = await lapsed;
    assert.equal(ctx.code, 3005, `connecting after ${ctx.code} (${ctx.reason})`);
    // The SDK reconnects, and the backend authenticates it again.
    const again = await waitEvent(zed, 'connected', { timeoutMs: WAIT_MS });
    assert.notEqual(again.client, client);
    // Its new session would lapse the same way every few seconds.
    zed.disconnect();
  });

  test('sub_refresh: an expiring subscription stays up because the backend extends it', async () => {
    const fay = track(nodeA.url, user('fay'));
    const { client } = await connect(fay);
    const sub = fay.newSubscription('px:expiring-news');
    const ctx = await subscribe(sub);
    assert.equal(ctx.data.initial, 'px:expiring-news');
    const unsubscribes = new EventLog(sub, 'unsubscribed');
    const resubscribes = new EventLog(sub, 'subscribing');
    const refreshes = callLog(
      backend,
      'sub_refresh',
      (body) => body.client === client && body.channel === 'px:expiring-news',
    );
    try {
      const [first] = await refreshes.count(2, WAIT_MS);
      assert.equal(first.body.user, 'fay');
    } finally {
      refreshes.stop();
    }
    assert.equal(unsubscribes.events.length + resubscribes.events.length, 0, 'the subscription never lapsed');
    const pubs = new EventLog(sub, 'publication');
    await apiPublish(nodeB, 'px:expiring-news', { after: 'refresh' });
    assert.deepEqual((await pubs.count(1))[0].data, { after: 'refresh' });
  });

  test('a backend answering 500 or malformed JSON: internal error 100, never half-connected', async (t) => {
    t.after(() => backend.setFault('*', undefined));
    const gil = track(nodeA.url, user('gil'));
    await connect(gil);
    for (const mode of ['500', 'malformed']) {
      backend.setFault('rpc', mode);
      await assert.rejects(gil.rpc('echo', {}), (err) => {
        assert.equal(err.code, 100, `${mode}: ${JSON.stringify(err)}`);
        return true;
      });
    }
    backend.setFault('rpc', undefined);
    assert.equal((await gil.rpc('echo', 1)).data.data, 1);

    // A refused connect is a temporary error: the SDK keeps retrying and
    // connects once the backend answers again.
    backend.setFault('connect', '500', { when: (body) => body.data?.user === 'hal' });
    const hal = track(nodeB.url, user('hal'));
    const failed = waitEvent(hal, 'error', { filter: (ctx) => ctx.type === 'connect' });
    const connected = waitEvent(hal, 'connected');
    hal.connect();
    const err = await failed;
    assert.equal(err.error.code, 100, JSON.stringify(err.error));
    assert.equal(err.error.temporary, true);
    assert.notEqual(hal.state, 'connected');
    backend.setFault('connect', undefined);
    await connected;
  });

  test('the backend killed mid-run: error 100 while it is down, existing connections kept, recovery when it is back', async (t) => {
    t.after(async () => {
      if (!backend.alive) await backend.revive();
    });
    const ivy = track(nodeA.url, user('ivy'));
    await connect(ivy);
    const room = ivy.newSubscription('px:kill-room');
    await subscribe(room);
    const pubs = new EventLog(room, 'publication');

    await backend.kill();

    // A new client cannot connect, and is not let in half-authenticated.
    const jay = track(nodeB.url, user('jay'));
    const failed = waitEvent(jay, 'error', { filter: (ctx) => ctx.type === 'connect' });
    const connected = waitEvent(jay, 'connected');
    jay.connect();
    assert.equal((await failed).error.code, 100);
    assert.notEqual(jay.state, 'connected');

    // A connected client keeps its connection and subscription; its proxied
    // calls fail with 100.
    await assert.rejects(ivy.rpc('echo', {}), (err) => {
      assert.equal(err.code, 100, JSON.stringify(err));
      return true;
    });
    const later = ivy.newSubscription('px:kill-later', { minResubscribeDelay: 100, maxResubscribeDelay: 500 });
    const subFailed = waitEvent(later, 'error');
    const subscribed = waitEvent(later, 'subscribed');
    later.subscribe();
    assert.equal((await subFailed).error.code, 100);
    await apiPublish(nodeB, 'px:kill-room', { during: 'outage' });
    assert.deepEqual((await pubs.count(1))[0].data, { during: 'outage' });
    assert.equal(ivy.state, 'connected');

    await backend.revive();
    await connected;
    await subscribed;
    assert.equal((await ivy.rpc('echo', 'back')).data.data, 'back');
  });

  test('a backend hanging past the timeout: error 100 for that call only, others answered at once', async (t) => {
    t.after(() => backend.setFault('*', undefined));
    backend.setFault('subscribe', 'hang', { when: (body) => body.channel === 'px:hang' });
    const kim = track(nodeA.url, user('kim'));
    const lee = track(nodeA.url, user('lee'));
    await Promise.all([connect(kim), connect(lee)]);

    const stuck = kim.newSubscription('px:hang', { minResubscribeDelay: 100, maxResubscribeDelay: 500 });
    const hung = waitEvent(backend, 'subscribe', { filter: (r) => r.body.channel === 'px:hang' });
    const timedOut = waitEvent(stuck, 'error');
    stuck.subscribe();
    const call = await hung;

    // While kim's call hangs, lee's proxied subscribe on the same node is
    // answered at backend speed.
    const started = Date.now();
    await subscribe(lee.newSubscription('px:fast'));
    const fastMs = Date.now() - started;
    const rpcStarted = Date.now();
    await lee.rpc('echo', {});
    const rpcMs = Date.now() - rpcStarted;

    const err = await timedOut;
    const stuckMs = Date.now() - call.at;
    assert.equal(err.error.code, 100, JSON.stringify(err.error));
    assert.equal(err.error.temporary, true);
    assert.ok(stuckMs >= PROXY_TIMEOUT_MS - 200, `the hung call failed after ${stuckMs} ms, before the timeout`);
    assert.ok(fastMs < PROXY_TIMEOUT_MS / 2, `lee's subscribe took ${fastMs} ms while kim's call hung`);
    assert.ok(rpcMs < PROXY_TIMEOUT_MS / 2, `lee's rpc took ${rpcMs} ms while kim's call hung`);
    assert.equal(kim.state, 'connected');

    // The SDK retries a temporary error; once the backend answers, kim is in.
    const subscribed = waitEvent(stuck, 'subscribed');
    backend.setFault('subscribe', undefined);
    await subscribed;
  });
});

describe('a reconnect storm through the connect proxy', { skip: noStorm }, () => {
  let backend;
  let node;
  let storm;

  before(async () => {
    // A few ms per connect, so calls overlap at the backend (answered at
    // once, each would be over before the next arrives) and its count of
    // calls in flight is the one the node let through.
    backend = await startProxyBackend({ delayMs: 2 });
    node = await startHerald(stormConfig((e) => backend.endpoint(e)));
  });

  after(async () => {
    if (storm && storm.exitCode === null) {
      const exited = new Promise((resolve) => storm.once('exit', resolve));
      storm.send({ type: 'close' });
      const timer = setTimeout(() => storm.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await node?.stop();
    await backend?.stop();
  });

  test(`${STORM_CLIENTS} clients at once: the backend never sees more than ${STORM_IN_FLIGHT} calls in flight, and all connect`, { timeout: STORM_TIMEOUT_MS + 15_000 }, async () => {
    const started = Date.now();
    // Its own process: one fd per client.
    storm = fork(path.join(here, 'lib', 'proxybackend-storm.mjs'), [node.url, String(STORM_CLIENTS)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let last = {};
    const done = new Promise((resolve, reject) => {
      storm.on('message', (msg) => {
        last = msg;
        if (msg.type === 'done') resolve(msg);
      });
      storm.once('exit', (code) => reject(new Error(`storm exited with ${code}: ${JSON.stringify(last)}`)));
    });
    // The exit after a timeout (in the after hook) must not be unhandled.
    done.catch(() => {});
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`storm not done in ${STORM_TIMEOUT_MS} ms: ${JSON.stringify(last)}, backend max in flight ${backend.maxInFlight}`)),
        STORM_TIMEOUT_MS,
      );
    });
    let result;
    try {
      result = await Promise.race([done, deadline]);
    } finally {
      clearTimeout(timer);
    }
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `storm: ${result.connected} connected in ${seconds.toFixed(1)} s, ${result.attempts} attempts, ` +
        `errors ${JSON.stringify(result.errors)}, handshake failures ${result.failures}, ` +
        `backend max in flight ${backend.maxInFlight}, connect calls ${backend.calls.connect}`,
    );
    assert.equal(result.connected, STORM_CLIENTS);
    assert.ok(backend.maxInFlight <= STORM_IN_FLIGHT, `backend saw ${backend.maxInFlight} calls in flight`);
    // Calls did overlap at the backend, or the bound above proves nothing.
    assert.ok(backend.maxInFlight >= 10, `backend saw at most ${backend.maxInFlight} calls at once`);
    assert.ok(backend.calls.connect >= STORM_CLIENTS);
    // The limit was reached (excess connects were refused with 111) and
    // nothing else went wrong.
    assert.ok((result.errors['111'] ?? 0) > 0, `no connect was refused by the limit: ${JSON.stringify(result.errors)}`);
    assert.deepEqual(Object.keys(result.errors), ['111'], `unexpected error codes ${JSON.stringify(result.errors)}`);
  });
});
