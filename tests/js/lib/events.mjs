// Awaiting client events with a deadline, so tests wait for what they
// expect instead of sleeping for a guessed time.
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';

/** DEFAULT_TIMEOUT_MS bounds every wait; generous for a loaded 2-core CI. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * waitEvent resolves with the first `name` event of emitter whose context
 * passes filter, or rejects after timeoutMs.
 */
export function waitEvent(emitter, name, { filter = () => true, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
  return new Promise((resolve, reject) => {
    const onEvent = (ctx) => {
      if (!filter(ctx)) return;
      clearTimeout(timer);
      emitter.off(name, onEvent);
      resolve(ctx);
    };
    const timer = setTimeout(() => {
      emitter.off(name, onEvent);
      reject(new Error(`no '${name}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    emitter.on(name, onEvent);
  });
}

/**
 * EventLog records every `name` event of an emitter from the moment it is
 * made, and lets a test await the n-th one: events that arrive before the
 * test starts waiting are not lost.
 */
export class EventLog {
  constructor(emitter, name) {
    this.name = name;
    this.events = [];
    this.waiters = [];
    emitter.on(name, (ctx) => {
      this.events.push(ctx);
      this.waiters = this.waiters.filter((w) => !w.check());
    });
  }

  /** count resolves with the first n events once n have arrived. */
  count(n, timeoutMs = DEFAULT_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      const waiter = {
        check: () => {
          if (this.events.length < n) return false;
          clearTimeout(waiter.timer);
          resolve(this.events.slice(0, n));
          return true;
        },
      };
      if (waiter.check()) return;
      waiter.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`got ${this.events.length} '${this.name}' events, want ${n}, within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
}

/**
 * newClient makes a centrifuge client that uses the ws package (Node 20 has
 * no global WebSocket) and reconnects quickly, so tests do not wait out the
 * SDK's production backoff.
 */
export function newClient(url, options = {}) {
  return new Centrifuge(url, {
    websocket: WebSocket,
    minReconnectDelay: 100,
    maxReconnectDelay: 1000,
    timeout: 5000,
    ...options,
  });
}

/**
 * until resolves with the first `name` event of emitter, and rejects on the
 * first `failName` event (a terminal state) or after the default timeout.
 */
function until(emitter, name, failName, timeoutMs = DEFAULT_TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      emitter.off(name, onOk);
      emitter.off(failName, onFail);
    };
    const onOk = (ctx) => {
      done();
      resolve(ctx);
    };
    const onFail = (ctx) => {
      done();
      reject(new Error(`'${failName}' instead of '${name}': code ${ctx.code}, ${ctx.reason}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no '${name}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    emitter.on(name, onOk);
    emitter.on(failName, onFail);
  });
}

/** connect starts client and resolves with its 'connected' context. */
export function connect(client) {
  const connected = until(client, 'connected', 'disconnected');
  client.connect();
  return connected;
}

/** subscribe starts sub and resolves with its 'subscribed' context. */
export function subscribe(sub) {
  const subscribed = until(sub, 'subscribed', 'unsubscribed');
  sub.subscribe();
  return subscribed;
}
