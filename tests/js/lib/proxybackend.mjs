// An application backend for Herald's proxy, written to Centrifugo's proxy
// documentation (HTTP POST with a JSON body per event; a JSON answer with
// `result`, `error` or `disconnect`). It implements the six hooks at
// /centrifugo/<event> and has knobs a test turns to make it fail: hang,
// answer 500, answer malformed JSON, or die (every socket reset, nothing
// listening) and come back on the same port.
//
// Run standalone (for the Python tests and bench/proxy.sh):
//   node tests/js/lib/proxybackend.mjs [--port N] [--delay-ms N]
// prints one JSON line {"port":N} once it listens, and stops on SIGTERM.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import express from 'express';

/** EVENTS are the proxied events, each served at /centrifugo/<event>. */
export const EVENTS = ['connect', 'refresh', 'subscribe', 'publish', 'sub_refresh', 'rpc'];

/** Error codes the backend answers with; tests assert the client sees them. */
export const CODES = {
  subscribeDenied: 403,
  publishDenied: 1403,
  rpcError: 1500,
  rpcUnknown: 404,
  unauthorized: 4501,
};

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** cookieValue reads one cookie from a Cookie header. */
function cookieValue(header, name) {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

/**
 * ProxyBackend is a running backend. `endpoint(event)` is the URL to put in
 * a proxy's config. Counters: `calls[event]`, `inFlight`, `maxInFlight`,
 * `requests[event]` (the last bodies, with headers), and a 'call' event per
 * request and 'answered' per answer, for EventLog.
 */
export class ProxyBackend extends EventEmitter {
  constructor({ delayMs = 0, connectTTL = 0, refreshTTL = 3600, subTTL = 3600 } = {}) {
    super();
    this.setMaxListeners(0);
    // Per-event artificial latency in ms ('*' for every event).
    this.delayMs = { '*': delayMs };
    // Per-event fault: undefined (answer), 'hang', '500', 'malformed'.
    this.faults = {};
    // Seconds a connection lives before the refresh proxy must extend it
    // (0: forever, unless the connect data asks for a ttl), and how far
    // each refresh / sub_refresh extends it.
    this.connectTTL = connectTTL;
    this.refreshTTL = refreshTTL;
    this.subTTL = subTTL;
    this.hung = new Set();
    this.sockets = new Set();
    this.resetCounters();
    this.app = this.buildApp();
    this.server = http.createServer(this.app);
    // Keep-alive well past Herald's pool idle time, so a test sees reuse.
    this.server.keepAliveTimeout = 60_000;
    this.server.on('connection', (sock) => {
      this.sockets.add(sock);
      sock.on('close', () => this.sockets.delete(sock));
    });
  }

  resetCounters() {
    this.calls = Object.fromEntries(EVENTS.map((e) => [e, 0]));
    this.requests = Object.fromEntries(EVENTS.map((e) => [e, []]));
    this.inFlight = 0;
    this.maxInFlight = 0;
    this.answered = 0;
  }

  /** url is the backend's base URL. */
  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  endpoint(event) {
    return `${this.url}/centrifugo/${event}`;
  }

  /**
   * setFault makes events ('*' or a list) misbehave: 'hang' (never answer
   * until cleared), '500', 'malformed'; undefined clears it. `when`
   * narrows it to the requests whose body it accepts (one channel, one
   * user), so other clients' calls still get answers.
   */
  setFault(events, mode, { when = () => true } = {}) {
    for (const e of events === '*' ? EVENTS : [].concat(events)) {
      if (mode === undefined) delete this.faults[e];
      else this.faults[e] = { mode, when };
    }
    if (mode === undefined) this.releaseHung();
  }

  /** releaseHung ends the requests held by a 'hang' fault. */
  releaseHung() {
    for (const res of this.hung) res.destroy();
    this.hung.clear();
  }

  buildApp() {
    const app = express();
    app.disable('x-powered-by');
    app.use(express.json({ limit: '1mb' }));
    // Count every request from arrival to the end of its response, so
    // maxInFlight is the concurrency the backend really saw.
    app.use((req, res, next) => {
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      res.once('close', () => {
        this.inFlight--;
        this.answered++;
        this.emit('answered', req.path);
      });
      next();
    });
    app.post('/centrifugo/:event', (req, res) => this.handle(req, res));
    // A body that is not JSON: answer like a framework would.
    app.use((err, req, res, _next) => {
      res.status(400).json({ message: `bad request: ${err.message}` });
    });
    return app;
  }

  async handle(req, res) {
    const event = req.params.event;
    if (!EVENTS.includes(event)) {
      res.status(404).json({ message: `unknown event ${event}` });
      return;
    }
    this.calls[event]++;
    const record = { body: req.body, headers: req.headers, at: Date.now() };
    const log = this.requests[event];
    log.push(record);
    if (log.length > 100) log.shift();
    this.emit('call', { event, ...record });
    this.emit(event, record);

    const delay = this.delayMs[event] ?? this.delayMs['*'];
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const fault = this.faults[event];
    switch (fault?.when(req.body ?? {}) ? fault.mode : undefined) {
      case 'hang':
        this.hung.add(res);
        res.once('close', () => this.hung.delete(res));
        return;
      case '500':
        res.status(500).type('text/plain').send('internal server error');
        return;
      case 'malformed':
        res.status(200).type('application/json').send('{"result": {"user": ');
        return;
      default:
    }
    res.json(this[`on_${event}`](req.body ?? {}, req.headers));
  }

  /**
   * connect: the user comes from an X-User header, a `user` cookie, or the
   * connect data's `user`, in that order; no user means a disconnect.
   * Data `ttl` (seconds) makes the connection expire, so the refresh proxy
   * is called.
   */
  on_connect(body, headers) {
    const data = body.data ?? {};
    const user = headers['x-user'] ?? cookieValue(headers.cookie, 'user') ?? data.user;
    if (user === undefined || user === '') {
      return { disconnect: { code: CODES.unauthorized, reason: 'unauthorized' } };
    }
    const ttl = data.ttl ?? this.connectTTL;
    const result = {
      user: String(user),
      info: { name: String(user) },
      data: { welcome: String(user), client: body.client, transport: body.transport },
      meta: { user: String(user), via: 'proxybackend' },
    };
    if (ttl > 0) result.expire_at = nowSeconds() + ttl;
    return { result };
  }

  /** refresh: users named "expire-…" are let go, others extended. */
  on_refresh(body) {
    if (String(body.user ?? '').startsWith('expire-')) return { result: { expired: true } };
    return { result: { expire_at: nowSeconds() + this.refreshTTL } };
  }

  /**
   * subscribe: a channel with "denied" in its name is refused with an
   * error, one with "kick" with a disconnect; others are allowed with
   * initial data, and those with "expiring" expire after subTTL.
   */
  on_subscribe(body) {
    const channel = body.channel ?? '';
    if (channel.includes('denied')) {
      return { error: { code: CODES.subscribeDenied, message: 'subscription denied by backend' } };
    }
    if (channel.includes('kick')) {
      return { disconnect: { code: 4503, reason: 'kicked by backend' } };
    }
    const result = {
      info: { channel },
      data: { initial: channel, user: body.user },
    };
    if (channel.includes('expiring')) result.expire_at = nowSeconds() + this.subTTL;
    return { result };
  }

  /**
   * publish: denied on channels with "readonly", the data rewritten on
   * channels with "rewrite", kept as sent otherwise.
   */
  on_publish(body) {
    const channel = body.channel ?? '';
    if (channel.includes('readonly')) {
      return { error: { code: CODES.publishDenied, message: 'publish denied by backend' } };
    }
    if (channel.includes('rewrite')) {
      return { result: { data: { original: body.data, rewritten: true, by: body.user } } };
    }
    return { result: {} };
  }

  on_sub_refresh() {
    return { result: { expire_at: nowSeconds() + this.subTTL } };
  }

  /** rpc: "echo" answers with what it got, "error" with an error. */
  on_rpc(body) {
    switch (body.method) {
      case 'echo':
        return { result: { data: { method: body.method, data: body.data, user: body.user, meta: body.meta } } };
      case 'error':
        return { error: { code: CODES.rpcError, message: 'rpc failed in backend' } };
      default:
        return { error: { code: CODES.rpcUnknown, message: `unknown method ${body.method}` } };
    }
  }

  listen(port) {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        this.port = this.server.address().port;
        this.alive = true;
        resolve();
      });
    });
  }

  /**
   * kill makes the backend vanish the way a crashed process does: every
   * open connection is reset and nothing listens on the port until revive.
   */
  async kill() {
    this.alive = false;
    this.hung.clear();
    const closed = new Promise((resolve) => this.server.close(() => resolve()));
    for (const sock of this.sockets) sock.resetAndDestroy();
    await closed;
  }

  /** revive listens again on the same port. */
  revive() {
    return this.listen(this.port);
  }

  async stop() {
    if (!this.alive) return;
    this.releaseHung();
    this.alive = false;
    const closed = new Promise((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }
}

/** startProxyBackend resolves with a backend listening on loopback. */
export async function startProxyBackend({ port = 0, ...options } = {}) {
  const backend = new ProxyBackend(options);
  await backend.listen(port);
  return backend;
}

// Standalone mode.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      'delay-ms': { type: 'string', default: '0' },
      'sub-ttl': { type: 'string', default: '3600' },
    },
  });
  const backend = await startProxyBackend({
    port: Number(values.port),
    delayMs: Number(values['delay-ms']),
    subTTL: Number(values['sub-ttl']),
  });
  process.stdout.write(`${JSON.stringify({ port: backend.port })}\n`);
  const stop = async () => {
    await backend.stop();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
