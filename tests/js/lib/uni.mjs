// Readers of Herald's unidirectional transports, the way clients without an
// SDK use them: a connect request goes up once, then bare pushes
// ({"connect":…}, {"channel":…,"pub":…}, {"disconnect":…}, {} pings) come
// down. Each reader turns what arrives into 'push' events and resolves
// `ended` with how the stream ended.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';

import { EventSource } from 'eventsource';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import WebSocket from 'ws';

import { DEFAULT_TIMEOUT_MS, EventLog } from './events.mjs';
import { PATHS, httpBase } from './transports.mjs';

/**
 * PushReader logs the pushes of one unidirectional connection. Pings
 * (empty pushes) are counted apart, so tests see only what they wait for.
 */
class PushReader {
  constructor() {
    this.events = new EventEmitter();
    this.pushes = new EventLog(this.events, 'push');
    this.pings = 0;
    this.ended = new Promise((resolve) => {
      this.end = resolve;
    });
  }

  /** take handles one message: a JSON push. */
  take(text) {
    const push = JSON.parse(text);
    if (Object.keys(push).length === 0) {
      this.pings++;
      return;
    }
    this.events.emit('push', push);
  }

  /** takeLines handles newline-joined JSON pushes. */
  takeLines(text) {
    for (const line of text.split('\n')) {
      if (line.trim()) this.take(line);
    }
  }

  /**
   * push waits for the first push that passes filter (counting from the
   * start); it fails at once if the stream ends first.
   */
  async push(filter, timeoutMs = DEFAULT_TIMEOUT_MS) {
    const deadline = Date.now() + timeoutMs;
    const endedFirst = this.ended.then((how) => {
      throw new Error(`stream ended (${JSON.stringify(how)}) before the push; got ${JSON.stringify(this.pushes.events)}`);
    });
    endedFirst.catch(() => {}); // only the race below reports it
    for (let n = 1; ; n++) {
      const events = await Promise.race([this.pushes.count(n, Math.max(1, deadline - Date.now())), endedFirst]);
      if (filter(events[n - 1])) return events[n - 1];
    }
  }

  /** endedWithin resolves with how the stream ended, or rejects after timeoutMs. */
  endedWithin(timeoutMs = DEFAULT_TIMEOUT_MS) {
    let timer;
    const expired = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`stream still open after ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([this.ended, expired]).finally(() => clearTimeout(timer));
  }
}

/** connectQuery is the query that carries the connect request (uni_sse GET, uni_websocket). */
function connectQuery(request) {
  return `?cf_connect=${encodeURIComponent(JSON.stringify(request))}`;
}

/**
 * uniSSEEventSource reads uni_sse through the `eventsource` package (what
 * a browser's EventSource does). EventSource reconnects by itself after an
 * error or the end of the stream: the reader closes it at the first one, so
 * one reader is one connection.
 */
export function uniSSEEventSource(port, request) {
  const reader = new PushReader();
  const es = new EventSource(`${httpBase(port)}${PATHS.uni_sse}${connectQuery(request)}`);
  reader.opened = new Promise((resolve) => es.addEventListener('open', resolve, { once: true }));
  es.onmessage = (e) => reader.take(e.data);
  es.onerror = (e) => {
    es.close();
    reader.end({ error: e.message ?? 'error', status: e.code });
  };
  reader.close = () => {
    es.close();
    reader.end({ closed: true });
  };
  return reader;
}

/**
 * readStream feeds a fetch response's body to onChunk until it ends, then
 * ends reader with the HTTP status and headers.
 */
async function readBody(reader, res, body, onChunk) {
  try {
    for await (const chunk of body) onChunk(chunk);
    reader.end({ done: true, status: res.status });
  } catch (err) {
    reader.end({ error: err.message, status: res.status });
  }
}

/**
 * fetchUni opens a unidirectional HTTP stream with fetch; decode turns the
 * response body into a stream of messages passed to reader. The reader's
 * `response` resolves with the response (status, headers) once it starts.
 */
function fetchUni(url, init, decode) {
  const reader = new PushReader();
  const abort = new AbortController();
  reader.close = () => abort.abort();
  reader.response = fetch(url, { ...init, signal: abort.signal }).then(
    (res) => {
      if (!res.ok) {
        res.body?.cancel();
        reader.end({ done: true, status: res.status });
        return res;
      }
      decode(reader, res);
      return res;
    },
    (err) => {
      reader.end({ error: err.message });
      throw err;
    },
  );
  reader.response.catch(() => {});
  return reader;
}

/**
 * uniSSEFetch reads uni_sse with plain fetch and an SSE parser: the bytes
 * on the wire, not a browser's interpretation of them.
 */
export function uniSSEFetch(port, request) {
  return fetchUni(
    `${httpBase(port)}${PATHS.uni_sse}${connectQuery(request)}`,
    { headers: { Accept: 'text/event-stream' } },
    (reader, res) => {
      const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      readBody(reader, res, events, (event) => reader.take(event.data));
    },
  );
}

/** uniHTTPStreamFetch reads uni_http_stream with fetch: newline-delimited JSON pushes. */
export function uniHTTPStreamFetch(port, request) {
  return fetchUni(
    `${httpBase(port)}${PATHS.uni_http_stream}`,
    { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(request) },
    (reader, res) => {
      let buf = '';
      readBody(reader, res, res.body.pipeThrough(new TextDecoderStream()), (text) => {
        buf += text;
        const last = buf.lastIndexOf('\n');
        if (last < 0) return;
        reader.takeLines(buf.slice(0, last));
        buf = buf.slice(last + 1);
      });
    },
  );
}

/**
 * uniHTTPStreamCurl reads uni_http_stream with `curl -N` (no buffering),
 * as a shell script would.
 */
export function uniHTTPStreamCurl(port, request) {
  const reader = new PushReader();
  const proc = spawn(
    'curl',
    [
      '--silent',
      '--show-error',
      '--no-buffer',
      '--fail',
      '-X',
      'POST',
      '-H',
      'Content-Type: application/json',
      '--data-binary',
      JSON.stringify(request),
      `${httpBase(port)}${PATHS.uni_http_stream}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let buf = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (text) => {
    buf += text;
    const last = buf.lastIndexOf('\n');
    if (last < 0) return;
    reader.takeLines(buf.slice(0, last));
    buf = buf.slice(last + 1);
  });
  proc.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  proc.once('exit', (code, signal) => reader.end({ exitCode: code, signal, stderr }));
  // If the test process dies first, curl must not outlive it.
  const killOnExit = () => proc.kill('SIGKILL');
  process.once('exit', killOnExit);
  reader.ended.then(() => process.off('exit', killOnExit));
  reader.close = () => proc.kill('SIGTERM');
  return reader;
}

/**
 * uniWebSocket connects to uni_websocket with the ws package and sends the
 * connect request as its first message (or, with inQuery, in the cf_connect
 * query parameter). `ended` resolves with the close code and reason.
 */
export function uniWebSocket(port, request, { inQuery = false } = {}) {
  const reader = new PushReader();
  const query = inQuery ? connectQuery(request) : '';
  const ws = new WebSocket(`ws://127.0.0.1:${port}${PATHS.uni_websocket}${query}`);
  if (!inQuery) ws.on('open', () => ws.send(JSON.stringify(request)));
  ws.on('message', (data) => reader.takeLines(data.toString()));
  ws.on('error', () => {}); // surfaced through the close
  ws.on('close', (code, reason) => reader.end({ code, reason: reason.toString() }));
  reader.close = () => ws.terminate();
  return reader;
}
