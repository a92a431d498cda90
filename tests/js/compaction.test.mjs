// Channel compaction and state invalidation with centrifuge-js, in the JSON
// and Protobuf builds: the SDK asks for compaction on every subscribe (bit
// 1 of flag), and where the namespace allows it routes publications, joins
// and leaves by the channel id Herald gives; the server API's
// invalidate_state makes the SDK drop its cached position and token (2502
// for a subscription, 3014 for the connection) and start afresh.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { Centrifuge as CentrifugeProtobuf } from 'centrifuge/build/protobuf';
import WebSocket from 'ws';

import { connect, newClient, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { RawClient } from './lib/raw.mjs';

const API_KEY = 'compaction-test-api-key';

let herald;

before(async () => {
  const open = { allow_subscribe_for_client: true, allow_publish_for_client: true };
  herald = await startHerald({
    http_api: { key: API_KEY },
    channel: {
      namespaces: [
        { name: 'cc', ...open, allow_channel_compaction: true, presence: true, join_leave: true, force_push_join_leave: true },
        { name: 'ccrec', ...open, allow_channel_compaction: true, history_size: 10, history_ttl: '300s', force_recovery: true },
      ],
    },
  });
});

after(async () => {
  await herald?.stop();
});

/** apiCall calls the node's server API. */
const apiCall = (method, params) => herald.api(API_KEY, method, params);

// Clients get their token from getToken, as the SDK needs to fetch a new
// one after a 3014.
const builds = {
  json: (getToken) => newClient(herald.url, { getToken }),
  protobuf: (getToken) =>
    new CentrifugeProtobuf(herald.url, { websocket: WebSocket, minReconnectDelay: 100, maxReconnectDelay: 1000, getToken }),
};

/** tokenOf is a getToken for user. */
const tokenOf = (user) => async () => connectionToken(user);

function dataOf(build, data) {
  return build === 'protobuf' ? JSON.parse(new TextDecoder().decode(data)) : data;
}

test('the pushes a compacted subscriber receives carry the channel id, not the name', async () => {
  const raw = await RawClient.open(herald.url);
  try {
    await raw.call({ connect: { token: connectionToken('raw') } });
    const reply = await raw.call({ subscribe: { channel: 'cc:wire', flag: 1 } });
    const id = reply.subscribe.id;
    assert.ok(id > 0, `subscribe result ${JSON.stringify(reply)}`);
    await apiCall('publish', { channel: 'cc:wire', data: { n: 1 } });
    // Its own join first (join/leave pushed to everyone), then the publication.
    const [join, pub] = await raw.pushes.count(2);
    assert.equal(join.id, id);
    assert.equal(join.channel, undefined);
    assert.deepEqual(pub, { id, pub: { data: { n: 1 } } });
  } finally {
    raw.close();
  }
});

// The Protobuf build of centrifuge-js 5.8.0 cannot route pushes by id (it
// compares the int64 ids, decoded as long.js objects, by identity), so
// Herald gives it none and routes its pushes by name (hub/compaction.go,
// routesByID): the same test shows the build working.
for (const build of Object.keys(builds)) {
  test(`${build}: publications, joins and leaves reach a subscription that asked for compaction`, async () => {
    const channel = `cc:room-${build}`;
    const a = builds[build](tokenOf(`a-${build}`));
    const b = builds[build](tokenOf(`b-${build}`));
    try {
      await connect(a);
      const subA = a.newSubscription(channel);
      const ofB = { filter: (ctx) => ctx.info.user === `b-${build}` };
      const join = waitEvent(subA, 'join', ofB);
      const leave = waitEvent(subA, 'leave', ofB);
      const pub = waitEvent(subA, 'publication');
      await subscribe(subA);
      await connect(b);
      const subB = b.newSubscription(channel);
      await subscribe(subB);
      await join;
      await subB.publish(build === 'protobuf' ? new TextEncoder().encode('{"text":"hi"}') : { text: 'hi' });
      const got = await pub;
      assert.equal(got.channel, channel);
      assert.deepEqual(dataOf(build, got.data), { text: 'hi' });
      b.disconnect();
      await leave;
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });

  test(`${build}: invalidate_state drops a subscription's position (2502) and the connection's token (3014)`, async () => {
    const user = `inv-${build}`;
    const channel = `ccrec:doc-${build}`;
    let tokens = 0;
    const c = builds[build](async () => {
      tokens++;
      return connectionToken(user);
    });
    try {
      await connect(c);
      const sub = c.newSubscription(channel);
      await subscribe(sub);
      const published = waitEvent(sub, 'publication');
      await apiCall('publish', { channel, data: { v: 1 } });
      await published;

      const resubscribed = waitEvent(sub, 'subscribed');
      const subscribing = waitEvent(sub, 'subscribing');
      await apiCall('invalidate_state', { user, channel });
      assert.equal((await subscribing).code, 2502);
      // The SDK's position is gone: it recovers from a position the server
      // never gave, so the recovery fails and the app reloads its state.
      const again = await resubscribed;
      assert.equal(again.wasRecovering, true);
      assert.equal(again.recovered, false);

      const before = tokens;
      const connecting = waitEvent(c, 'connecting');
      const reconnected = waitEvent(c, 'connected');
      await apiCall('invalidate_state', { user });
      assert.equal((await connecting).code, 3014);
      await reconnected;
      assert.ok(tokens > before, 'no new token fetched after 3014');
    } finally {
      c.disconnect();
    }
  });
}
