// The quickstart's backend: a plain node:http server that
//
//   GET  /               serves the page (index.html)
//   GET  /centrifuge.js  serves centrifuge-js from node_modules
//   POST /token          mints a connection token for a user name
//   POST /say            publishes a message to Herald through its server API
//
// Herald itself never sees this server: the page connects to Herald with the
// token from /token, and messages reach Herald from here, over HTTP with the
// API key. That is how a backend talks to Herald: tokens out, publications in.
//
// Settings come from the environment; the defaults match herald.yaml:
//
//   QUICKSTART_PORT          the port to listen on (3000; 0 picks a free one)
//   QUICKSTART_HOST          the address to listen on (127.0.0.1)
//   QUICKSTART_HERALD_URL    where Herald listens (http://127.0.0.1:8000)
//   QUICKSTART_TOKEN_SECRET  client.token.hmac_secret_key in herald.yaml
//   QUICKSTART_API_KEY       http_api.key in herald.yaml
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { SignJWT, jwtVerify } from 'jose';

const here = path.dirname(fileURLToPath(import.meta.url));

const settings = {
  port: Number(process.env.QUICKSTART_PORT ?? 3000),
  host: process.env.QUICKSTART_HOST || '127.0.0.1',
  heraldURL: (process.env.QUICKSTART_HERALD_URL || 'http://127.0.0.1:8000').replace(/\/+$/, ''),
  tokenSecret: process.env.QUICKSTART_TOKEN_SECRET || 'quickstart-token-secret-change-me',
  apiKey: process.env.QUICKSTART_API_KEY || 'quickstart-api-key-change-me',
};

// The one channel of the example; its namespace "chat" in herald.yaml turns
// on history, presence and join/leave events.
const CHANNEL = 'chat:lobby';
// Connection tokens expire; the page asks for a new one (centrifuge-js's
// getToken) when Herald says so.
const TOKEN_TTL = '1h';
const MAX_NAME = 32;
const MAX_TEXT = 500;
// Requests carry a name or one message: anything bigger is a mistake.
const MAX_BODY = 16 * 1024;
const PUBLISH_TIMEOUT_MS = 5000;

if (!Number.isInteger(settings.port) || settings.port < 0 || settings.port > 65535) {
  console.error(`QUICKSTART_PORT=${process.env.QUICKSTART_PORT}: want a port number (0-65535)`);
  process.exit(2);
}

const secret = new TextEncoder().encode(settings.tokenSecret);
// The page's WebSocket endpoint is Herald's address with ws: for http:.
const websocketURL = `${settings.heraldURL.replace(/^http/, 'ws')}/connection/websocket`;

// Read once at start, so a missing `npm ci` is reported at once and not as
// a broken page.
const page = readFileSync(path.join(here, 'index.html'));
let centrifugeJS;
try {
  centrifugeJS = readFileSync(path.join(here, 'node_modules', 'centrifuge', 'dist', 'centrifuge.js'));
} catch (err) {
  console.error(`centrifuge-js is not installed (${err.message}): run npm ci in ${here}`);
  process.exit(1);
}

/** HTTPError is a request the backend refuses, with the status to answer. */
class HTTPError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** readJSON reads a request body of at most MAX_BODY bytes as a JSON object. */
async function readJSON(req) {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
    throw new HTTPError(415, 'send the body as application/json');
  }
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY) {
      throw new HTTPError(413, `the body is over ${MAX_BODY} bytes`);
    }
    chunks.push(chunk);
  }
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new HTTPError(400, `the body is not valid JSON: ${err.message}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HTTPError(400, 'the body must be a JSON object');
  }
  return body;
}

/** userName checks the name typed on the page. */
function userName(value) {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '' || name.length > MAX_NAME || !/^[\p{L}\p{N} _.-]+$/u.test(name)) {
    throw new HTTPError(400, `a name is 1 to ${MAX_NAME} letters, digits, spaces, '.', '_' or '-'`);
  }
  return name;
}

/**
 * mintToken signs a connection token: an HS256 JWT whose sub is the user.
 * Herald checks it with client.token.hmac_secret_key.
 */
function mintToken(user) {
  return new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(user).setIssuedAt().setExpirationTime(TOKEN_TTL).sign(secret);
}

/**
 * tokenUser returns the user of the connection token in the request's
 * Authorization header: the page proves who it is with the token it got
 * from /token, so nobody can post under another name.
 */
async function tokenUser(req) {
  const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
  if (!m) {
    throw new HTTPError(401, 'send your connection token as "Authorization: Bearer TOKEN" (from POST /token)');
  }
  try {
    const { payload } = await jwtVerify(m[1], secret, { algorithms: ['HS256'] });
    return userName(payload.sub);
  } catch (err) {
    throw new HTTPError(401, `the token is not valid: ${err.message}`);
  }
}

/**
 * publish sends data to channel through Herald's server API: POST
 * /api/publish with the API key. Herald answers 200 with either a result or
 * an error object.
 */
async function publish(channel, data) {
  const url = `${settings.heraldURL}/api/publish`;
  let res;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': settings.apiKey },
      body: JSON.stringify({ channel, data }),
      signal: AbortSignal.timeout(PUBLISH_TIMEOUT_MS),
    });
  } catch (err) {
    throw new HTTPError(502, `cannot reach Herald at ${url}: ${err.cause?.message ?? err.message}`);
  }
  const text = await res.text();
  let reply;
  try {
    reply = JSON.parse(text);
  } catch {
    reply = null;
  }
  if (!res.ok || reply === null || reply.error) {
    const why = reply?.error ? `error ${reply.error.code}: ${reply.error.message}` : `HTTP ${res.status}: ${text.slice(0, 200)}`;
    throw new HTTPError(502, `Herald refused the publication (${why})`);
  }
}

function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
  res.end(body);
}

function sendJSON(res, status, value) {
  send(res, status, 'application/json', JSON.stringify(value));
}

/** routes maps "METHOD /path" to a handler that returns the JSON to answer. */
const routes = {
  'GET /': (req, res) => send(res, 200, 'text/html; charset=utf-8', page),
  'GET /centrifuge.js': (req, res) => send(res, 200, 'text/javascript; charset=utf-8', centrifugeJS),
  'POST /token': async (req, res) => {
    const user = userName((await readJSON(req)).user);
    sendJSON(res, 200, { user, token: await mintToken(user), websocket: websocketURL, channel: CHANNEL });
  },
  'POST /say': async (req, res) => {
    const user = await tokenUser(req);
    const { text } = await readJSON(req);
    const message = typeof text === 'string' ? text.trim() : '';
    if (message === '' || message.length > MAX_TEXT) {
      throw new HTTPError(400, `a message is 1 to ${MAX_TEXT} characters`);
    }
    await publish(CHANNEL, { user, text: message });
    sendJSON(res, 200, { ok: true });
  },
};

async function handle(req, res) {
  const { pathname } = new URL(req.url, 'http://backend');
  const route = routes[`${req.method} ${pathname}`];
  try {
    if (!route) {
      const known = Object.keys(routes).some((r) => r.endsWith(` ${pathname}`));
      throw known ? new HTTPError(405, `${req.method} is not allowed on ${pathname}`) : new HTTPError(404, `no ${pathname} here`);
    }
    await route(req, res);
  } catch (err) {
    const status = err instanceof HTTPError ? err.status : 500;
    if (status >= 500) {
      console.error(`${req.method} ${pathname}: ${err.message}`);
    }
    if (!res.headersSent) {
      sendJSON(res, status, { error: err.message });
    }
  }
}

const server = http.createServer((req, res) => {
  handle(req, res);
});

server.on('error', (err) => {
  console.error(`quickstart backend: ${err.message}`);
  process.exit(1);
});

server.listen(settings.port, settings.host, () => {
  const { port } = server.address();
  // run.sh and the test wait for this line.
  console.log(`quickstart backend listening on http://${settings.host}:${port}/ (Herald at ${settings.heraldURL})`);
});

// Ctrl-C or SIGTERM: stop taking requests, end the open ones, exit.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
