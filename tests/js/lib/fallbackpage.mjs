// The page of the browser fallback tests, and a small static server for it
// on its own loopback port: Herald serves no files, and a page from another
// origin is what a real deployment has, so CORS is exercised too.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

const DIST = path.join(here, '..', 'node_modules', 'centrifuge', 'dist');

/** CENTRIFUGE_JS is the SDK's browser build (a bundle that sets window.Centrifuge). */
export const CENTRIFUGE_JS = path.join(DIST, 'centrifuge.js');

/** CENTRIFUGE_PROTOBUF_JS is the same with the Protobuf codec. */
export const CENTRIFUGE_PROTOBUF_JS = path.join(DIST, 'centrifuge.protobuf.js');

// The page records every client and subscription event in window.events
// (and shows them, for the screenshot); the test starts a client with
// window.start and waits for events with page.waitForFunction. The
// Protobuf build's publications are bytes: the page decodes them as the
// JSON text the server API published.
const page = (sdk) => `<!doctype html>
<html>
<head><meta charset="utf-8"><title>herald transport fallback</title></head>
<body>
<h1>herald transport fallback</h1>
<pre id="log"></pre>
<script src="${sdk}"></script>
<script>
window.events = [];
function record(kind, fields) {
  const event = { kind, at: Date.now(), ...fields };
  window.events.push(event);
  document.getElementById('log').textContent += JSON.stringify(event) + '\\n';
}
window.start = function (transports, options, channel) {
  const client = new Centrifuge(transports, options);
  client.on('connecting', (ctx) => record('connecting', { code: ctx.code, reason: ctx.reason }));
  client.on('connected', (ctx) => record('connected', { transport: ctx.transport, client: ctx.client }));
  client.on('disconnected', (ctx) => record('disconnected', { code: ctx.code, reason: ctx.reason }));
  client.on('error', (ctx) => record('error', { type: ctx.type, transport: ctx.transport, message: ctx.error && ctx.error.message }));
  const sub = client.newSubscription(channel);
  sub.on('subscribed', (ctx) => record('subscribed', { recovered: ctx.recovered, wasRecovering: ctx.wasRecovering }));
  sub.on('publication', (ctx) => {
    const data = ctx.data instanceof Uint8Array ? JSON.parse(new TextDecoder().decode(ctx.data)) : ctx.data;
    record('publication', { data, offset: ctx.offset === undefined ? undefined : String(ctx.offset) });
  });
  sub.on('error', (ctx) => record('suberror', { message: ctx.error && ctx.error.message }));
  sub.subscribe();
  client.connect();
  window.client = client;
};
</script>
</body>
</html>
`;

/**
 * startPageServer serves the page at / (JSON build) and /protobuf
 * (Protobuf build), and the SDK's bundles, on a free loopback port;
 * resolves with { origin, close }.
 */
export async function startPageServer() {
  const files = {
    '/': { type: 'text/html; charset=utf-8', body: page('/centrifuge.js') },
    '/protobuf': { type: 'text/html; charset=utf-8', body: page('/centrifuge.protobuf.js') },
    '/centrifuge.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(CENTRIFUGE_JS) },
    '/centrifuge.protobuf.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(CENTRIFUGE_PROTOBUF_JS) },
  };
  const server = http.createServer((req, res) => {
    const file = files[new URL(req.url, 'http://localhost').pathname];
    if (!file) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': file.type, 'Cache-Control': 'no-store' });
    res.end(file.body);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
