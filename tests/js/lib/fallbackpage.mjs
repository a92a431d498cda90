// The page of the browser fallback tests, and a small static server for it
// on its own loopback port: Herald serves no files, and a page from another
// origin is what a real deployment has, so CORS is exercised too.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** CENTRIFUGE_JS is the SDK's browser build (a UMD bundle that sets window.Centrifuge). */
export const CENTRIFUGE_JS = path.join(here, '..', 'node_modules', 'centrifuge', 'dist', 'centrifuge.js');

// The page records every client and subscription event in window.events
// (and shows them, for the screenshot); the test starts a client with
// window.start and waits for events with page.waitForFunction.
const PAGE = `<!doctype html>
<html>
<head><meta charset="utf-8"><title>herald transport fallback</title></head>
<body>
<h1>herald transport fallback</h1>
<pre id="log"></pre>
<script src="/centrifuge.js"></script>
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
  sub.on('publication', (ctx) => record('publication', { data: ctx.data, offset: ctx.offset }));
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
 * startPageServer serves the page at / and the SDK at /centrifuge.js on a
 * free loopback port; resolves with { origin, close }.
 */
export async function startPageServer() {
  const sdk = readFileSync(CENTRIFUGE_JS);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(PAGE);
    } else if (url.pathname === '/centrifuge.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' });
      res.end(sdk);
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found\n');
    }
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
