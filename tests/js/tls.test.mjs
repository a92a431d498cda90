// centrifuge-js over wss: herald serving TLS from certificate files, and a
// certificate rotated on SIGHUP while a client stays connected.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, test } from 'node:test';

import WebSocket from 'ws';

import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';

// Certificates are made with the openssl command (Debian's openssl
// package), so the test needs no certificate library.
const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-js-tls-'));
const file = (name) => path.join(dir, name);

function openssl(...args) {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** issue makes a server certificate for 127.0.0.1 and localhost, signed by the test CA. */
function issue(name) {
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
  writeFileSync(file(`${name}.ext`), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
    '-days', '1', '-extfile', `${name}.ext`, '-out', `${name}.crt`);
}

openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
  '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=herald-js-test-ca');
issue('first');
issue('second');
copyFileSync(file('first.crt'), file('tls.crt'));
copyFileSync(file('first.key'), file('tls.key'));
const ca = execFileSync('cat', [file('ca.crt')]);

/** TrustingWebSocket is ws trusting the test CA, for centrifuge-js's websocket option. */
class TrustingWebSocket extends WebSocket {
  constructor(url, protocols, options = {}) {
    super(url, protocols, { ...options, ca });
  }
}

/** servedCertificate is what a new TLS connection to port gets. */
function servedCertificate(port) {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const cert = sock.getPeerCertificate();
      sock.destroy();
      resolve(cert);
    });
    sock.once('error', reject);
  });
}

let herald;
let url;

before(async () => {
  herald = await startHerald({
    tls: { cert_file: file('tls.crt'), key_file: file('tls.key') },
    channel: {
      without_namespace: { allow_subscribe_for_client: true, allow_publish_for_subscriber: true },
    },
  });
  url = `wss://127.0.0.1:${herald.port}/connection/websocket`;
});

after(async () => {
  await herald?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('centrifuge-js connects over wss and a rotated certificate keeps it connected', async (t) => {
  const alice = newClient(url, { token: connectionToken('alice'), websocket: TrustingWebSocket });
  const bob = newClient(url, { token: connectionToken('bob'), websocket: TrustingWebSocket });
  t.after(() => {
    alice.disconnect();
    bob.disconnect();
  });
  await Promise.all([connect(alice), connect(bob)]);
  const bobSub = bob.newSubscription('news');
  const received = new EventLog(bobSub, 'publication');
  await subscribe(bobSub);
  const aliceSub = alice.newSubscription('news');
  await subscribe(aliceSub);
  await aliceSub.publish({ n: 1 });
  assert.deepEqual((await received.count(1))[0].data, { n: 1 });

  const before = await servedCertificate(herald.port);
  assert.equal(before.subject.CN, 'first');
  copyFileSync(file('second.crt'), file('tls.crt'));
  copyFileSync(file('second.key'), file('tls.key'));
  herald.proc.kill('SIGHUP');
  // Reloaded at once on SIGHUP; poll a little in case the signal is
  // handled after the first handshake.
  let after;
  for (let i = 0; i < 50; i++) {
    after = await servedCertificate(herald.port);
    if (after.subject.CN === 'second') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(after.subject.CN, 'second', 'a new connection gets the new certificate');

  // The connections opened before the rotation still carry publications,
  // and a new client trusts the new certificate.
  await aliceSub.publish({ n: 2 });
  assert.deepEqual((await received.count(2))[1].data, { n: 2 });
  assert.equal(bob.state, 'connected');
  const carol = newClient(url, { token: connectionToken('carol'), websocket: TrustingWebSocket });
  t.after(() => carol.disconnect());
  await connect(carol);
});

test('a client that does not trust the certificate does not connect', async (t) => {
  const client = newClient(url, { token: connectionToken('dave') });
  t.after(() => client.disconnect());
  const error = waitEvent(client, 'error');
  client.connect();
  const ctx = await error;
  assert.equal(ctx.type, 'transport', `error ${JSON.stringify(ctx)}`);
  assert.notEqual(client.state, 'connected');
});
