// A reconnect storm against a herald node whose connect goes through the
// proxy: N minimal JSON-protocol WebSocket clients (a centrifuge-js
// instance each would be too heavy for 10,000 in one process), all started
// at once, each retrying with a jittered backoff after a refused connect
// (the SDKs' behaviour for a temporary error such as 111) or a failed
// handshake, until every one is connected.
//
// Run as a child process (one fd per client, so it gets its own limit):
//   node proxybackend-storm.mjs URL COUNT
// It reports over IPC: {type:'progress'|'done', connected, attempts,
// errors: {code: count}, failures} and, once all are connected, waits for
// a 'close' message to close every socket and exit.
import WebSocket from 'ws';

const [url, countArg] = process.argv.slice(2);
const count = Number(countArg);
if (!url || !Number.isInteger(count) || count <= 0) {
  console.error('usage: proxybackend-storm.mjs URL COUNT');
  process.exit(2);
}

// Close to the SDKs' reconnect backoff (centrifuge-js: 500 ms to 20 s): a
// short cap makes 10,000 clients retry faster than a loaded node can turn
// them away, and the refused handshakes then crowd out the connects.
const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 10_000;
const HANDSHAKE_TIMEOUT_MS = 10_000;

const stats = { connected: 0, attempts: 0, errors: {}, failures: 0 };
const sockets = new Set();

const report = (type) => process.send?.({ type, ...stats });

/** backoff is full-jitter exponential, as the SDKs do it. */
function backoff(attempt) {
  const cap = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** attempt);
  return MIN_BACKOFF_MS + Math.random() * cap;
}

function start(i, attempt) {
  stats.attempts++;
  let settled = false;
  const ws = new WebSocket(url, { handshakeTimeout: HANDSHAKE_TIMEOUT_MS, perMessageDeflate: false });
  sockets.add(ws);
  const retry = () => {
    if (settled) return;
    settled = true;
    sockets.delete(ws);
    ws.terminate();
    setTimeout(() => start(i, attempt + 1), backoff(attempt));
  };
  ws.on('open', () => {
    ws.send(JSON.stringify({ id: 1, connect: { data: { user: `storm-${i}` }, name: 'storm' } }));
  });
  ws.on('message', (raw) => {
    for (const line of raw.toString().split('\n')) {
      if (line === '') continue;
      const msg = JSON.parse(line);
      if (msg.id === 1 && msg.connect) {
        settled = true;
        stats.connected++;
        if (stats.connected === count) report('done');
      } else if (msg.id === 1 && msg.error) {
        stats.errors[msg.error.code] = (stats.errors[msg.error.code] ?? 0) + 1;
        retry();
      } else if (Object.keys(msg).length === 0) {
        // A ping: answer with a pong.
        ws.send('{}');
      }
    }
  });
  ws.on('error', () => {
    if (!settled) stats.failures++;
    retry();
  });
  ws.on('close', () => {
    if (!settled) retry();
  });
}

const ticker = setInterval(() => report('progress'), 500);
process.on('message', (msg) => {
  if (msg?.type !== 'close') return;
  clearInterval(ticker);
  for (const ws of sockets) ws.terminate();
  process.exit(0);
});
// The parent going away must not leave 10,000 sockets open.
process.on('disconnect', () => process.exit(1));

for (let i = 0; i < count; i++) start(i, 0);
