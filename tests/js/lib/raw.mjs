// A bare protocol-v2 JSON client over the ws package, for tests that must
// send what the SDK never would, or watch what the SDK hides.
import { EventEmitter } from 'node:events';

import WebSocket from 'ws';

import { DEFAULT_TIMEOUT_MS, EventLog } from './events.mjs';

/** RawClient speaks newline-delimited JSON commands and replies. */
export class RawClient {
  /** open resolves once the WebSocket handshake is done. */
  static open(url) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.once('open', () => resolve(new RawClient(ws)));
      ws.once('error', reject);
    });
  }

  constructor(ws) {
    this.ws = ws;
    this.nextId = 1;
    this.pending = new Map();
    this.events = new EventEmitter();
    this.pushes = new EventLog(this.events, 'push');
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('error', () => {}); // surfaced through `closed`
    ws.on('message', (data) => {
      for (const line of data.toString().trim().split('\n')) {
        if (!line) continue;
        const msg = JSON.parse(line);
        if (msg.id && this.pending.has(msg.id)) {
          this.pending.get(msg.id)(msg);
          this.pending.delete(msg.id);
        } else if (msg.push) {
          this.events.emit('push', msg.push);
        } else if (!msg.id) {
          this.send('{}'); // a server ping: answer with a pong
        }
      }
    });
  }

  /** send writes one raw frame. */
  send(frame) {
    this.ws.send(frame);
  }

  /** call sends a command and resolves with its reply (result or error). */
  call(command, timeoutMs = DEFAULT_TIMEOUT_MS) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no reply to ${JSON.stringify(command)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.ws.send(JSON.stringify({ id, ...command }));
    });
  }

  /** closedWithin resolves with the close code and reason, or rejects after timeoutMs. */
  closedWithin(timeoutMs = DEFAULT_TIMEOUT_MS) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`connection still open after ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([this.closed, timeout]).finally(() => clearTimeout(timer));
  }

  close() {
    this.ws.terminate();
  }
}
