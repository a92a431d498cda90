// The unidirectional transports with the clients people use instead of an
// SDK: uni_sse through the `eventsource` package and through plain fetch
// streaming, uni_http_stream through fetch streaming and `curl -N`, and
// uni_websocket through the ws package. Each connects with a token and gets
// the connect push, is subscribed by the server API and receives the API's
// publications, and is disconnected by the API with a disconnect push (on
// WebSocket, then a close frame) carrying the code.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';

import { connectionToken, startHerald } from './lib/herald.mjs';
import { api, transportConfig } from './lib/transports.mjs';
import { uniHTTPStreamCurl, uniHTTPStreamFetch, uniSSEEventSource, uniSSEFetch, uniWebSocket } from './lib/uni.mjs';

const TEST_TIMEOUT_MS = 30_000;

/** noCurl says why the curl reader cannot run, or is false. */
function noCurl() {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'no curl on this machine';
  }
}

const READERS = [
  { name: 'uni_sse (eventsource package)', open: uniSSEEventSource },
  { name: 'uni_sse (fetch)', open: uniSSEFetch },
  { name: 'uni_http_stream (fetch)', open: uniHTTPStreamFetch },
  { name: 'uni_http_stream (curl -N)', open: uniHTTPStreamCurl, skip: noCurl() },
  { name: 'uni_websocket (ws)', open: uniWebSocket, websocket: true },
  {
    name: 'uni_websocket (ws, cf_connect)',
    open: (port, request) => uniWebSocket(port, request, { inQuery: true }),
    websocket: true,
  },
];

// A code the server API sends: reconnect allowed, so the push says so.
const DISCONNECT = { code: 4100, reason: 'test over' };

// The HTTP streams and the WebSocket one come from two layers
// (transport/httpstream, transport/websocket) with their own keys: a node
// for each, so that a problem with one family does not hide the other.
const nodes = {};

before(() => {
  nodes.http = startHerald(transportConfig({ uni_sse: { enabled: true }, uni_http_stream: { enabled: true } }));
  nodes.websocket = startHerald(transportConfig({ uni_websocket: { enabled: true } }));
  // A node that fails to start fails its tests, with its log, when they await it.
  for (const node of Object.values(nodes)) node.catch(() => {});
});

after(async () => {
  await Promise.all(Object.values(nodes).map((node) => node.then((h) => h.stop(), () => {})));
});

/** portFor resolves with the port of the node that serves a reader's transport. */
async function portFor(websocket) {
  return (await (websocket ? nodes.websocket : nodes.http)).port;
}

describe('unidirectional transports', { concurrency: true }, () => {
  for (const [i, { name, open, skip, websocket }] of READERS.entries()) {
    test(`${name}: connect push, server-side subscribe, publications, disconnect push`, { skip, timeout: TEST_TIMEOUT_MS }, async (t) => {
      // Every reader has its own user, so the API's user-wide subscribe and
      // disconnect reach only it.
      const user = `uni-user-${i}`;
      const channel = `uni-${i}`;
      const port = await portFor(websocket);
      const reader = open(port, { token: connectionToken(user) });
      t.after(() => reader.close());

      const { connect } = await reader.push((p) => p.connect);
      assert.ok(connect.client, `connect push ${JSON.stringify(connect)} names the client`);
      assert.equal(connect.id, undefined, 'a push, not a reply');

      await api(port, 'subscribe', { user, channel });
      await reader.push((p) => p.channel === channel && p.subscribe);

      await api(port, 'publish', { channel, data: { n: 1 } });
      await api(port, 'publish', { channel, data: { n: 2 } });
      const first = await reader.push((p) => p.channel === channel && p.pub);
      assert.deepEqual(first.pub.data, { n: 1 });
      const second = await reader.push((p) => p.channel === channel && p.pub?.data?.n === 2);
      assert.deepEqual(second.pub.data, { n: 2 });

      await api(port, 'disconnect', { user, disconnect: DISCONNECT });
      const ended = await reader.endedWithin();
      const pushed = reader.pushes.events.find((p) => p.disconnect);
      assert.ok(pushed, `a disconnect push before the end ${JSON.stringify(ended)}; got ${JSON.stringify(reader.pushes.events)}`);
      assert.equal(pushed.disconnect.code, DISCONNECT.code);
      assert.equal(pushed.disconnect.reason, DISCONNECT.reason);
      if (websocket) {
        // The close frame says it too, for clients that read only that.
        assert.deepEqual({ code: ended.code, reason: ended.reason }, DISCONNECT, `closed ${JSON.stringify(ended)}`);
      }
      if (ended.exitCode !== undefined) {
        assert.equal(ended.exitCode, 0, `curl ended cleanly: ${ended.stderr}`);
      }
    });
  }
});

describe('unidirectional transports refuse an invalid token', { concurrency: true }, () => {
  for (const { name, open, skip, websocket } of READERS) {
    test(`${name}: disconnect push 3500 and no connect push`, { skip, timeout: TEST_TIMEOUT_MS }, async (t) => {
      const reader = open(await portFor(websocket), { token: 'not-a-jwt' });
      t.after(() => reader.close());
      const { disconnect } = await reader.push((p) => p.disconnect);
      assert.deepEqual({ code: disconnect.code, reason: disconnect.reason }, { code: 3500, reason: 'invalid token' });
      await reader.endedWithin();
      assert.deepEqual(
        reader.pushes.events.filter((p) => p.connect),
        [],
        'no connect push for a refused token',
      );
    });
  }
});
