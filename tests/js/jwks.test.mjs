// centrifuge-js with tokens of an identity provider: herald verifies them
// with the provider's JSON Web Key Set. The provider is played by an HTTP
// server publishing keys generated here, rotated during the run; tokens
// are signed with jsonwebtoken.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';

import jwt from 'jsonwebtoken';

import { EventLog, connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { startHerald } from './lib/herald.mjs';

const AUDIENCE = 'herald-test';

/** idpKey is a signing key of the provider and its public JWK. */
function idpKey(kid, alg) {
  const { privateKey, publicKey } = alg.startsWith('RS')
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid, alg, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' } };
}

/** mint signs a connection token as the provider would. */
function mint(key, user, { kid = key.kid, audience = AUDIENCE, header = {} } = {}) {
  return jwt.sign({ uid: user, sub: `idp|${user}` }, key.privateKey, {
    algorithm: key.alg, keyid: kid, audience, expiresIn: 3600, header: { kid, ...header },
  });
}

const provider = { keys: [], down: false, fetches: 0 };
const jwks = http.createServer((req, res) => {
  provider.fetches++;
  if (provider.down) {
    res.writeHead(503).end('maintenance');
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/jwk-set+json' });
  res.end(JSON.stringify({ keys: provider.keys.map((k) => k.jwk) }));
});

const k1 = idpKey('2026-01', 'RS256');
const k2 = idpKey('2026-02', 'ES256');
let herald;

before(async () => {
  provider.keys = [k1];
  await new Promise((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  herald = await startHerald({
    client: {
      token: {
        jwks_public_endpoint: `http://127.0.0.1:${jwks.address().port}/.well-known/jwks.json`,
        audience_regex: '^herald-(test|prod)$',
        user_id_claim: 'uid',
      },
    },
    channel: { without_namespace: { allow_subscribe_for_client: true, allow_publish_for_subscriber: true } },
  });
});

after(async () => {
  await herald?.stop();
  jwks.close();
});

/** refused connects with token and resolves with the disconnect context. */
async function refused(token) {
  const client = newClient(herald.url, { token });
  try {
    const disconnected = waitEvent(client, 'disconnected');
    client.connect();
    return await disconnected;
  } finally {
    client.disconnect();
  }
}

/** connectWhenAccepted retries token with new clients until one connects. */
async function connectWhenAccepted(token, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = newClient(herald.url, { token });
    try {
      await connect(client);
      return client;
    } catch (err) {
      client.disconnect();
      if (Date.now() > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

test('tokens of the provider verify before and after a key rotation; bad ones get 3500 while others are served', async (t) => {
  const alice = newClient(herald.url, { token: mint(k1, 'alice') });
  t.after(() => alice.disconnect());
  await connect(alice);
  assert.equal(provider.fetches, 1, 'the first token fetches the key set once');
  const aliceSub = alice.newSubscription('news');
  const received = new EventLog(aliceSub, 'publication');
  await subscribe(aliceSub);

  const stranger = idpKey('2026-01', 'RS256'); // a published kid, another key
  const bad = {
    'unknown kid': mint(idpKey('ghost', 'RS256'), 'eve'),
    'forged with a published kid': mint(stranger, 'eve'),
    'wrong audience': mint(k1, 'eve', { audience: 'someone-else' }),
    'crit header': mint(k1, 'eve', { header: { crit: ['exp'] } }),
    'alg none': jwt.sign({ uid: 'eve', aud: AUDIENCE }, null, { algorithm: 'none', header: { kid: k1.kid } }),
  };
  for (const [name, token] of Object.entries(bad)) {
    const d = await refused(token);
    assert.equal(d.code, 3500, `${name}: disconnect code ${d.code} (${d.reason})`);
  }
  assert.equal(provider.fetches, 1, 'an unknown kid right after a fetch fetches nothing (rate limit)');

  // Rotation: the provider adds a key and signs new tokens with it. Herald
  // fetches again once the minimum interval (10 s) since the first fetch
  // has passed; until then the new kid is refused.
  provider.keys = [k1, k2];
  const bob = await connectWhenAccepted(mint(k2, 'bob'), 20_000);
  t.after(() => bob.disconnect());
  assert.equal(provider.fetches, 2, 'the new kid triggers exactly one refresh');

  // Tokens of the old key still verify, and the connected clients were
  // not disturbed.
  const carol = newClient(herald.url, { token: mint(k1, 'carol') });
  t.after(() => carol.disconnect());
  await connect(carol);
  const bobSub = bob.newSubscription('news');
  await subscribe(bobSub);
  await bobSub.publish({ text: 'still here' });
  const [pub] = await received.count(1);
  assert.deepEqual(pub.data, { text: 'still here' });
  assert.equal(pub.info.user, 'bob', 'user_id_claim: the user is the uid claim, not sub');
  assert.equal(provider.fetches, 2);
});

test('while the provider is down, cached keys keep verifying tokens and herald says so', async (t) => {
  provider.down = true;
  t.after(() => {
    provider.down = false;
  });
  // An unknown kid makes herald try the provider once the minimum interval
  // has passed since the last fetch; the attempt fails.
  const ghost = mint(idpKey('ghost', 'RS256'), 'eve');
  const deadline = Date.now() + 20_000;
  while (provider.fetches < 3) {
    assert.ok(Date.now() < deadline, `no fetch attempt while the provider is down (fetches ${provider.fetches})`);
    const d = await refused(ghost);
    assert.equal(d.code, 3500);
    if (provider.fetches < 3) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const metrics = await (await fetch(`http://127.0.0.1:${herald.port}/metrics`)).text();
  assert.match(metrics, /^herald_jwks_up\{token="client.token"\} 0$/m);
  assert.match(metrics, /^herald_jwks_fetches_total\{result="error",token="client.token"\} 1$/m);
  assert.match(herald.log, /JWKS endpoint unavailable: keeping the cached keys/);

  const carol = newClient(herald.url, { token: mint(k1, 'carol') });
  const dave = newClient(herald.url, { token: mint(k2, 'dave') });
  t.after(() => {
    carol.disconnect();
    dave.disconnect();
  });
  await Promise.all([connect(carol), connect(dave)]);
  assert.equal(provider.fetches, 3, 'known kids need no fetch');
});
