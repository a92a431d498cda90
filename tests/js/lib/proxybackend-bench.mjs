// The measurements of bench/proxy.sh, against a node whose connect and
// "px:" subscribes go through the proxy to lib/proxybackend.mjs:
//   1. connects per second through the connect proxy (no token), and with
//      a JWT for comparison (the proxy is not called then), N connects with
//      C in flight, each a fresh WebSocket: open, connect, close;
//   2. the round trip of a subscribe to a proxied channel ("px:") and to a
//      plain one ("plain:"), K of each, interleaved on one connection (each
//      followed by an untimed unsubscribe).
// Prints a Markdown report.
//
//   node proxybackend-bench.mjs --url WS_URL --secret HMAC [--connects N]
//        [--concurrency C] [--subscribes K]
import { parseArgs } from 'node:util';

import jwt from 'jsonwebtoken';
import WebSocket from 'ws';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    secret: { type: 'string' },
    connects: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '50' },
    subscribes: { type: 'string', default: '500' },
  },
});
if (!values.url || !values.secret) {
  console.error('usage: proxybackend-bench.mjs --url WS_URL --secret HMAC [--connects N] [--concurrency C] [--subscribes K]');
  process.exit(2);
}
const CONNECTS = Number(values.connects);
const CONCURRENCY = Number(values.concurrency);
const SUBSCRIBES = Number(values.subscribes);
const TIMEOUT_MS = 10_000;

/** Conn is one JSON-protocol connection with request/reply by id. */
class Conn {
  static open(url) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: TIMEOUT_MS });
      ws.once('open', () => resolve(new Conn(ws)));
      ws.once('error', reject);
    });
  }

  constructor(ws) {
    this.ws = ws;
    this.nextId = 1;
    this.pending = new Map();
    ws.on('message', (raw) => {
      for (const line of raw.toString().split('\n')) {
        if (line === '') continue;
        const msg = JSON.parse(line);
        if (Object.keys(msg).length === 0) {
          ws.send('{}');
          continue;
        }
        const p = this.pending.get(msg.id);
        if (!p) continue;
        this.pending.delete(msg.id);
        clearTimeout(p.timer);
        if (msg.error) p.reject(new Error(`error ${msg.error.code}: ${msg.error.message}`));
        else p.resolve(msg);
      }
    });
    ws.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('connection closed'));
      this.pending.clear();
    });
  }

  command(body) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no reply in ${TIMEOUT_MS} ms to ${JSON.stringify(body)}`));
      }, TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.ws.send(JSON.stringify({ id, ...body }));
    });
  }

  close() {
    this.ws.terminate();
  }
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function summary(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const f = (v) => v.toFixed(2);
  return { p50: f(quantile(s, 0.5)), p90: f(quantile(s, 0.9)), p99: f(quantile(s, 0.99)), max: f(s[s.length - 1]) };
}

/** connectRun opens, connects and closes n connections, c at a time. */
async function connectRun(connectBody) {
  const latencies = [];
  let next = 0;
  let failures = 0;
  const worker = async () => {
    while (next < CONNECTS) {
      const i = next++;
      const started = performance.now();
      let conn;
      try {
        conn = await Conn.open(values.url);
        await conn.command({ connect: connectBody(i) });
        latencies.push(performance.now() - started);
      } catch {
        failures++;
      } finally {
        conn?.close();
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { rate: latencies.length / seconds, failures, ...summary(latencies) };
}

const proxied = await connectRun((i) => ({ data: { user: `bench-${i}` } }));
// Signed before the clock starts: the bench measures the server.
const tokens = Array.from({ length: CONNECTS }, (_, i) =>
  jwt.sign({ sub: `bench-${i}` }, values.secret, { algorithm: 'HS256' }),
);
const token = await connectRun((i) => ({ token: tokens[i] }));

const conn = await Conn.open(values.url);
await conn.command({ connect: { data: { user: 'bench-sub' } } });
const rtt = { px: [], plain: [] };
for (let i = 0; i < SUBSCRIBES; i++) {
  for (const ns of ['px', 'plain']) {
    const channel = `${ns}:bench-${i}`;
    const started = performance.now();
    await conn.command({ subscribe: { channel } });
    rtt[ns].push(performance.now() - started);
    // Untimed: a client's channels are limited (client.channel_limit).
    await conn.command({ unsubscribe: { channel } });
  }
}
conn.close();
const px = summary(rtt.px);
const plain = summary(rtt.plain);

const row = (name, r) =>
  `| ${name} | ${r.rate.toFixed(0)} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.max} | ${r.failures} |`;
console.log(`## Connects (${CONNECTS}, ${CONCURRENCY} in flight, a new WebSocket each)\n`);
console.log('| connect | per second | p50 ms | p90 ms | p99 ms | max ms | failed |');
console.log('|---|---|---|---|---|---|---|');
console.log(row('through the connect proxy', proxied));
console.log(row('with a JWT (no proxy call)', token));
console.log(`\n## Subscribe round trip (${SUBSCRIBES} of each, one connection, one at a time)\n`);
console.log('| subscribe | p50 ms | p90 ms | p99 ms | max ms |');
console.log('|---|---|---|---|---|');
console.log(`| proxied (px:) | ${px.p50} | ${px.p90} | ${px.p99} | ${px.max} |`);
console.log(`| not proxied (plain:) | ${plain.p50} | ${plain.p90} | ${plain.p99} | ${plain.max} |`);
console.log(`\nAdded by the subscribe proxy at p50: ${(px.p50 - plain.p50).toFixed(2)} ms`);
process.exit(0);
