// A Centrifugo v6 configuration file, unchanged: herald serve runs
// Centrifugo's quickstart config.json (config/testdata/centrifugo), its port
// set the Centrifugo way (CENTRIFUGO_HTTP_SERVER_PORT), and centrifuge-js
// connects with a token signed by the file's key, subscribes, and receives
// a publication sent over the HTTP API with the file's API key.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import jwt from 'jsonwebtoken';

import { connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { Herald, freePort, heraldBinary, waitListening } from './lib/herald.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONFIG = path.join(repoRoot, 'config', 'testdata', 'centrifugo', 'quickstart.json');
// client.token.hmac_secret_key and http_api.key of that file.
const SECRET = 'bbe7d157-a253-4094-9759-06a8236543f9';
const API_KEY = 'd7627bb6-2292-4911-82e1-615c0ed3eebb';

let herald;

before(async () => {
  const port = await freePort();
  const proc = spawn(heraldBinary(), ['serve', '--config', CONFIG], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      CENTRIFUGO_HTTP_SERVER_ADDRESS: '127.0.0.1',
      CENTRIFUGO_HTTP_SERVER_PORT: String(port),
      CENTRIFUGO_LOG_LEVEL: 'warn',
    },
  });
  herald = new Herald(proc, port, mkdtempSync(path.join(os.tmpdir(), 'herald-cf-')));
  await waitListening(herald);
});

after(async () => {
  await herald?.stop();
});

test('centrifuge-js against Centrifugo\'s quickstart configuration', async (t) => {
  const token = jwt.sign({ sub: '123722' }, SECRET, { algorithm: 'HS256', expiresIn: 3600 });
  const client = newClient(herald.url, { token });
  t.after(() => client.disconnect());
  await connect(client);
  const sub = client.newSubscription('channel');
  await subscribe(sub);
  const received = waitEvent(sub, 'publication');
  const resp = await fetch(`http://127.0.0.1:${herald.port}/api/publish`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': API_KEY },
    body: JSON.stringify({ channel: 'channel', data: { value: 1 } }),
  });
  assert.equal(resp.status, 200, await resp.text());
  const ctx = await received;
  assert.deepEqual(ctx.data, { value: 1 });
});
