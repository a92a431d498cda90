// The same end-to-end scenarios on every bidirectional transport: the
// centrifuge-js SDK forced onto WebSocket, HTTP-streaming or SSE (JSON), and
// onto WebSocket or HTTP-streaming with its Protobuf build. SSE is JSON only:
// EventSource carries text, and the SDK's SSE transport has no Protobuf
// framing (its Protobuf build cannot use SSE).
//
// Each transport connects with a token, publishes and receives (its own
// publications and the server API's), reads presence and history, recovers
// what it missed while its network was cut, and keeps its connection and a
// private subscription past their first tokens' expiry through getToken. A node stopped with SIGTERM
// sends every transport's clients away with 3001, and they come back to the
// restarted node. With websocket.compression on, the SDK's WebSocket
// negotiates permessage-deflate.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import WebSocket from 'ws';

import { EventLog, connect, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald, subscriptionToken } from './lib/herald.mjs';
import { CuttableProxy } from './lib/proxy.mjs';
import { TokenSource } from './lib/tokensource.mjs';
import { api, codec, transportClient, transportConfig } from './lib/transports.mjs';

const CASES = [
  { transport: 'websocket', protocol: 'json' },
  { transport: 'http_stream', protocol: 'json' },
  { transport: 'sse', protocol: 'json' },
  { transport: 'websocket', protocol: 'protobuf' },
  { transport: 'http_stream', protocol: 'protobuf' },
];

// Short tokens and close delays keep the refresh tests to a few seconds;
// whole seconds, because the server counts expiry in seconds. The server
// gives the SDK the time left truncated to whole seconds (a token whose
// expiry is 2.01 s away has ttl 3 if issued in the same second) and the SDK
// refreshes after exactly ttl, so a refresh may come up to a second after the
// real expiry: the close delay must leave more than that second.
const TTL_SECONDS = 3;
const CLOSE_DELAY_SECONDS = 2;
const WAIT_MS = 15_000;
const TOKEN_TIMING = { closeDelaySeconds: CLOSE_DELAY_SECONDS, waitMs: WAIT_MS };
const MISSED = 5;
// Each test is a few round trips, or a few token lifetimes.
const TEST_TIMEOUT_MS = 40_000;

const NAMESPACE = {
  name: 'tr',
  presence: true,
  history_size: 100,
  history_ttl: '300s',
  force_recovery: true,
  allow_subscribe_for_client: true,
  allow_publish_for_client: true,
  allow_presence_for_subscriber: true,
  allow_history_for_subscriber: true,
};

let herald;

before(async () => {
  herald = await startHerald(
    transportConfig({
      client: {
        expired_close_delay: `${CLOSE_DELAY_SECONDS}s`,
        expired_sub_close_delay: `${CLOSE_DELAY_SECONDS}s`,
      },
      channel: { namespaces: [NAMESPACE] },
    }),
  );
});

after(async () => {
  await herald?.stop();
});

/** waitForN waits until a publication whose decoded data has n === want is logged, and returns all logged ones decoded. */
async function waitForN(log, decode, want) {
  for (let count = 1; ; count++) {
    const events = await log.count(count, WAIT_MS);
    if (decode(events[count - 1].data).n === want) return log.events.map((p) => decode(p.data).n);
  }
}

// The Protobuf build gives 64-bit offsets as protobufjs Long objects.
const num = (v) => (typeof v === 'object' && v !== null ? v.toNumber() : v);
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** recordDrops records the events that would mean a dropped connection. */
function recordDrops(client) {
  const drops = [];
  for (const name of ['disconnected', 'connecting']) {
    client.on(name, (ctx) => drops.push({ name, code: ctx.code, reason: ctx.reason }));
  }
  return drops;
}

describe('every transport', { concurrency: true }, () => {
  for (const { transport, protocol } of CASES) {
    const name = `${transport}-${protocol}`;
    const { encode, decode } = codec(protocol);
    const newClient = (port, options) => transportClient(port, transport, { protocol, ...options });

    describe(`${transport} (${protocol})`, { concurrency: true, timeout: TEST_TIMEOUT_MS * 2 }, () => {
      test('connects with a token and publishes and receives both ways', { timeout: TEST_TIMEOUT_MS }, async (t) => {
        const channel = `tr:pubsub-${name}`;
        const client = newClient(herald.port, { token: connectionToken(`user-${name}`) });
        t.after(() => client.disconnect());
        const connected = await connect(client);
        assert.equal(connected.transport, transport, 'the SDK used the forced transport');
        assert.ok(connected.client, 'the connect result names the client');

        const sub = client.newSubscription(channel);
        const pubs = new EventLog(sub, 'publication');
        await subscribe(sub);

        // Up: the client publishes (over the emulation endpoint for the HTTP
        // transports) and gets its own publication back down its stream.
        await sub.publish(encode({ n: 1, from: 'client' }));
        // Down: the server API publishes.
        await api(herald.port, 'publish', { channel, data: { n: 2, from: 'api' } });

        const got = await pubs.count(2);
        assert.deepEqual(
          got.map((p) => decode(p.data)),
          [
            { n: 1, from: 'client' },
            { n: 2, from: 'api' },
          ],
        );
        assert.equal(got[0].info?.user, `user-${name}`, 'a client publication carries its publisher');
      });

      test('reads presence and history', { timeout: TEST_TIMEOUT_MS }, async (t) => {
        const channel = `tr:presence-${name}`;
        const client = newClient(herald.port, { token: connectionToken(`user-${name}`) });
        t.after(() => client.disconnect());
        const { client: clientId } = await connect(client);
        const sub = client.newSubscription(channel);
        const pubs = new EventLog(sub, 'publication');
        await subscribe(sub);

        const presence = await sub.presence();
        assert.deepEqual(Object.keys(presence.clients), [clientId]);
        assert.equal(presence.clients[clientId].user, `user-${name}`);
        const stats = await sub.presenceStats();
        assert.deepEqual({ ...stats }, { numClients: 1, numUsers: 1 });

        for (const n of range(1, 3)) await api(herald.port, 'publish', { channel, data: { n } });
        await pubs.count(3);
        const history = await sub.history({ limit: 10 });
        assert.deepEqual(
          history.publications.map((p) => decode(p.data).n),
          [1, 2, 3],
        );
        assert.deepEqual(
          history.publications.map((p) => num(p.offset)),
          [1, 2, 3],
        );
        assert.equal(num(history.offset), 3);
        assert.ok(history.epoch, 'history names the stream epoch');
      });

      test('recovers exactly the publications missed while its network was cut', { timeout: TEST_TIMEOUT_MS }, async (t) => {
        const channel = `tr:recovery-${name}`;
        // Both the stream and the emulation requests go through the proxy.
        const proxy = await CuttableProxy.start(herald.port);
        const client = newClient(proxy.port, { token: connectionToken(`user-${name}`) });
        t.after(async () => {
          client.disconnect();
          await proxy.close();
        });
        await connect(client);
        const sub = client.newSubscription(channel);
        const pubs = new EventLog(sub, 'publication');
        const first = await subscribe(sub);
        assert.equal(first.recoverable, true, 'force_recovery makes the subscription recoverable');
        await api(herald.port, 'publish', { channel, data: { n: 1 } });
        await pubs.count(1);

        const dropped = waitEvent(client, 'connecting');
        proxy.cut();
        await dropped;
        for (const n of range(2, 1 + MISSED)) await api(herald.port, 'publish', { channel, data: { n } });

        const resubscribed = waitEvent(sub, 'subscribed', { timeoutMs: WAIT_MS });
        proxy.restore();
        const ctx = await resubscribed;
        assert.equal(ctx.wasRecovering, true);
        assert.equal(ctx.recovered, true);
        // A marker sent after the return: once it is in, every replayed
        // publication (and any duplicate) is in too.
        const marker = 2 + MISSED;
        await api(herald.port, 'publish', { channel, data: { n: marker } });
        const seen = await waitForN(pubs, decode, marker);
        assert.deepEqual(seen, range(1, marker), 'each publication exactly once, in order');
      });

      test('refreshes its connection token through getToken and stays connected', { timeout: TEST_TIMEOUT_MS }, async (t) => {
        const channel = `tr:refresh-${name}`;
        const tokens = new TokenSource(() => connectionToken(`refresher-${name}`, { ttlSeconds: TTL_SECONDS }), TOKEN_TIMING);
        const client = newClient(herald.port, { getToken: tokens.get });
        t.after(() => client.disconnect());
        await connect(client);
        const sub = client.newSubscription(channel);
        const pubs = new EventLog(sub, 'publication');
        await subscribe(sub);
        const drops = recordDrops(client);

        const calls = await tokens.pastFirstExpiry();
        assert.ok(calls >= 2, `getToken called ${calls} times`);
        assert.deepEqual(drops, [], 'the connection never dropped');
        assert.equal(client.state, 'connected');

        await api(herald.port, 'publish', { channel, data: { n: 1 } });
        const [pub] = await pubs.count(1);
        assert.deepEqual(decode(pub.data), { n: 1 });
      });

      test('refreshes a private subscription token through getToken and stays subscribed', { timeout: TEST_TIMEOUT_MS }, async (t) => {
        const channel = `$tr:sub-refresh-${name}`;
        const user = `member-${name}`;
        const client = newClient(herald.port, { token: connectionToken(user) });
        t.after(() => client.disconnect());
        await connect(client);
        const tokens = new TokenSource(() => subscriptionToken(user, channel, { ttlSeconds: TTL_SECONDS }), TOKEN_TIMING);
        const sub = client.newSubscription(channel, { getToken: tokens.get });
        const pubs = new EventLog(sub, 'publication');
        await subscribe(sub);
        const drops = [];
        for (const event of ['unsubscribed', 'subscribing']) {
          sub.on(event, (ctx) => drops.push({ event, code: ctx.code, reason: ctx.reason }));
        }

        const calls = await tokens.pastFirstExpiry();
        assert.ok(calls >= 2, `getToken called ${calls} times`);
        assert.deepEqual(drops, [], 'the subscription never dropped');
        assert.equal(sub.state, 'subscribed');

        await api(herald.port, 'publish', { channel, data: { n: 1 } });
        const [pub] = await pubs.count(1);
        assert.deepEqual(decode(pub.data), { n: 1 });
      });
    });
  }
});

test('SIGTERM sends every transport away with 3001 and they come back to the restarted node', { timeout: 60_000 }, async (t) => {
  const config = transportConfig({
    shutdown: { drain_window: '200ms' },
    channel: { namespaces: [NAMESPACE] },
  });
  let node = await startHerald(config);
  const port = node.port;
  t.after(() => node.stop());

  const channel = 'tr:drain';
  const clients = [];
  for (const { transport, protocol } of CASES) {
    const client = transportClient(port, transport, { protocol, token: connectionToken(`drain-${transport}-${protocol}`) });
    t.after(() => client.disconnect());
    await connect(client);
    const sub = client.newSubscription(channel);
    const entry = { transport, protocol, client, sub, pubs: new EventLog(sub, 'publication'), decode: codec(protocol).decode };
    await subscribe(sub);
    clients.push(entry);
  }

  const away = clients.map(({ client }) => waitEvent(client, 'connecting'));
  node.proc.kill('SIGTERM');
  const reasons = await Promise.all(away);
  for (const [i, ctx] of reasons.entries()) {
    const { transport, protocol } = clients[i];
    assert.equal(ctx.code, 3001, `${transport} (${protocol}) went reconnecting with ${ctx.code} ${ctx.reason}`);
  }
  const exit = await node.exited;
  assert.equal(exit.code, 0, `the drained node exits cleanly:\n${node.log}`);
  await node.stop();

  // The same port, a new node: every client reconnects and resubscribes by itself.
  const back = clients.map(({ sub }) => waitEvent(sub, 'subscribed', { timeoutMs: WAIT_MS }));
  node = await startHerald(config, { port });
  await Promise.all(back);
  await api(port, 'publish', { channel, data: { n: 1 } });
  for (const { transport, protocol, pubs, decode } of clients) {
    const [pub] = await pubs.count(1);
    assert.deepEqual(decode(pub.data), { n: 1 }, `${transport} (${protocol}) receives after the restart`);
  }
});

test('websocket with compression: centrifuge-js negotiates permessage-deflate and round-trips large publications', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const node = await startHerald(
    transportConfig({ websocket: { compression: true, compression_min_size: 64 }, channel: { namespaces: [NAMESPACE] } }),
  );
  t.after(() => node.stop());
  // The ws package offers permessage-deflate by default; the subclass keeps
  // each socket, to read which extensions the handshake agreed.
  const sockets = [];
  class RecordingWebSocket extends WebSocket {
    constructor(...args) {
      super(...args);
      sockets.push(this);
    }
  }
  // Through a proxy that counts what the node sends.
  const proxy = await CuttableProxy.start(node.port);
  t.after(() => proxy.close());
  for (const protocol of ['json', 'protobuf']) {
    const { encode, decode } = codec(protocol);
    const client = transportClient(proxy.port, 'websocket', {
      protocol,
      websocket: RecordingWebSocket,
      token: connectionToken(`deflate-${protocol}`),
    });
    t.after(() => client.disconnect());
    await connect(client);
    const extensions = sockets.at(-1).extensions;
    assert.match(extensions, /permessage-deflate/, `${protocol}: negotiated extensions ${JSON.stringify(extensions)}`);

    const channel = `tr:deflate-${protocol}`;
    const sub = client.newSubscription(channel);
    const pubs = new EventLog(sub, 'publication');
    await subscribe(sub);
    // Repetitive text well over the minimum size: it is sent compressed.
    const text = 'herald '.repeat(2000);
    const before = proxy.bytesDown;
    await sub.publish(encode({ n: 1, text }));
    await api(node.port, 'publish', { channel, data: { n: 2, text } });
    const got = await pubs.count(2);
    assert.deepEqual(
      got.map((p) => decode(p.data)),
      [
        { n: 1, text },
        { n: 2, text },
      ],
    );
    const sent = proxy.bytesDown - before;
    assert.ok(sent < text.length, `${protocol}: the node sent ${sent} bytes for two publications of ${text.length} bytes each`);
  }
});
