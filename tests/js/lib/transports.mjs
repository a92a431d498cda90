// centrifuge-js on one chosen transport (WebSocket, HTTP-streaming or SSE,
// JSON or Protobuf) against a herald node, plus the server API and the
// endpoint paths the transport tests share.
import { Centrifuge } from 'centrifuge';
import { Centrifuge as ProtobufCentrifuge } from 'centrifuge/build/protobuf';
import { EventSource } from 'eventsource';
import WebSocket from 'ws';

/** API_KEY is the server API key of the nodes these tests start. */
export const API_KEY = 'herald-js-transports-api-key';

/** PATHS are the endpoints of the bidirectional transports and of emulation. */
export const PATHS = {
  websocket: '/connection/websocket',
  http_stream: '/connection/http_stream',
  sse: '/connection/sse',
  emulation: '/emulation',
  uni_websocket: '/connection/uni_websocket',
  uni_http_stream: '/connection/uni_http_stream',
  uni_sse: '/connection/uni_sse',
};

/**
 * transportConfig adds the server API key to a node configuration.
 * WebSocket, HTTP-streaming and SSE are on by default; the unidirectional
 * transports are turned on by the tests that use them.
 */
export function transportConfig(extra = {}) {
  return { ...extra, http_api: { key: API_KEY, ...(extra.http_api ?? {}) } };
}

/** httpBase is the http:// origin of a node or proxy listening on port. */
export function httpBase(port) {
  return `http://127.0.0.1:${port}`;
}

/**
 * quietFetch is fetch for the SDK. centrifuge-js sends emulation requests
 * with fetch and drops the promise: when a node is down, the rejection would
 * be unhandled and end the test process. The SDK's own stream requests
 * still see the rejection through the returned promise.
 */
export function quietFetch(url, init) {
  const p = globalThis.fetch(url, init);
  p.catch(() => {});
  return p;
}

/**
 * transportClient makes a centrifuge-js client that may only use
 * `transport` ('websocket', 'http_stream' or 'sse') on the node or proxy at
 * port, with the emulation endpoint at emulationPort (default: port).
 * Node has no EventSource: the `eventsource` package stands in.
 * protocol 'protobuf' uses the SDK's Protobuf build. paths are the node's
 * endpoints when its configuration moves them (the handler_prefix keys).
 */
export function transportClient(port, transport, { protocol = 'json', emulationPort = port, paths = PATHS, ...options } = {}) {
  const scheme = transport === 'websocket' ? 'ws' : 'http';
  const endpoint = `${scheme}://127.0.0.1:${port}${paths[transport]}`;
  const Client = protocol === 'protobuf' ? ProtobufCentrifuge : Centrifuge;
  return new Client([{ transport, endpoint }], {
    websocket: WebSocket,
    eventsource: EventSource,
    fetch: quietFetch,
    emulationEndpoint: `${httpBase(emulationPort)}${paths.emulation}`,
    minReconnectDelay: 100,
    maxReconnectDelay: 1000,
    timeout: 5000,
    ...options,
  });
}

/**
 * Codec turns test values into publication data and back: JSON clients
 * carry values, Protobuf clients bytes (the JSON text, as a server API
 * publication reaches them).
 */
export function codec(protocol) {
  if (protocol !== 'protobuf') {
    return { encode: (v) => v, decode: (d) => d };
  }
  return {
    encode: (v) => new TextEncoder().encode(JSON.stringify(v)),
    decode: (d) => JSON.parse(new TextDecoder().decode(d)),
  };
}

/**
 * api calls the server API method of the node at port and resolves with
 * its result, or rejects with its error.
 */
export async function api(port, method, params, { timeoutMs = 10_000, prefix = '/api' } = {}) {
  const res = await fetch(`${httpBase(port)}${prefix}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': API_KEY },
    body: JSON.stringify(params),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = await res.json();
  if (!res.ok || body.error) {
    throw new Error(`API ${method} ${JSON.stringify(params)}: HTTP ${res.status} ${JSON.stringify(body)}`);
  }
  return body.result;
}

/** redisAddr is the test Redis server from scripts/services.sh env, or undefined. */
export const redisAddr = process.env.HERALD_TEST_REDIS_ADDR;

/** requireServices is set when missing services fail tests instead of skipping them. */
export const requireServices = process.env.HERALD_TEST_REQUIRE_SERVICES === '1';

/**
 * redisEngine is the engine section of a node on the test Redis with a
 * prefix of its own, so test runs and files do not see each other's channels.
 */
export function redisEngine(prefix) {
  return { type: 'redis', redis: { address: redisAddr, prefix } };
}

/** uniqueName makes a name no other test run uses. */
export function uniqueName(base) {
  return `${base}_${process.pid}_${Date.now().toString(36)}`;
}
