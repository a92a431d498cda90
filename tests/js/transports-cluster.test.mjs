// Emulation across nodes: two herald nodes on one Redis, and centrifuge-js
// holding its stream (HTTP-streaming or SSE) on node A while it sends its
// commands to node B's emulation endpoint, as behind a load balancer that
// does not stick a client to one node. Node B hands each command to the
// session's node through the engine; subscribe, publish, presence and the
// server API's publications all work.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { EventLog, connect, subscribe } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { api, codec, redisAddr, redisEngine, requireServices, transportClient, transportConfig, uniqueName } from './lib/transports.mjs';

const CASES = [
  { transport: 'http_stream', protocol: 'json' },
  { transport: 'http_stream', protocol: 'protobuf' },
  { transport: 'sse', protocol: 'json' },
];

const TEST_TIMEOUT_MS = 30_000;

const skip = !redisAddr && !requireServices ? 'no Redis: HERALD_TEST_REDIS_ADDR is unset (scripts/services.sh env)' : false;

let nodeA;
let nodeB;

before(async () => {
  if (skip) return;
  assert.ok(redisAddr, 'HERALD_TEST_REDIS_ADDR must be set when HERALD_TEST_REQUIRE_SERVICES=1');
  const config = transportConfig({
    engine: redisEngine(uniqueName('herald_cluster_js')),
    channel: {
      namespaces: [
        {
          name: 'cl',
          presence: true,
          history_size: 10,
          history_ttl: '60s',
          allow_subscribe_for_client: true,
          allow_publish_for_client: true,
          allow_presence_for_subscriber: true,
        },
      ],
    },
  });
  [nodeA, nodeB] = await Promise.all([startHerald(config), startHerald(config)]);
  // A node routes emulation only to nodes its heartbeats know of (others
  // get 404, and centrifuge-js drops the commands until its timeout): wait
  // until each node has heard the other.
  await Promise.all([nodeA, nodeB].map((node) => waitNodes(node.port, 2)));
});

/**
 * waitNodes waits until the API info of the node at port lists n nodes.
 * Nodes announce themselves every few seconds; asking every 100 ms finds
 * out soon after, and the deadline bounds the wait.
 */
async function waitNodes(port, n, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { nodes } = await api(port, 'info', {});
    if (nodes.length >= n) return;
    if (Date.now() > deadline) throw new Error(`node on ${port} knows ${nodes.length} nodes after ${timeoutMs} ms, want ${n}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

after(async () => {
  await Promise.all([nodeA?.stop(), nodeB?.stop()]);
});

describe('a stream on node A, emulation on node B', { skip, concurrency: true }, () => {
  for (const { transport, protocol } of CASES) {
    test(`${transport} (${protocol}): subscribe, publish and presence through the other node`, { timeout: TEST_TIMEOUT_MS }, async (t) => {
      const { encode, decode } = codec(protocol);
      const user = `cluster-${transport}-${protocol}`;
      const channel = `cl:${transport}-${protocol}`;
      const client = transportClient(nodeA.port, transport, {
        protocol,
        emulationPort: nodeB.port,
        token: connectionToken(user),
      });
      t.after(() => client.disconnect());
      const connected = await connect(client);
      assert.equal(connected.transport, transport);

      // The subscribe command goes to node B, which routes it to A.
      const sub = client.newSubscription(channel);
      const pubs = new EventLog(sub, 'publication');
      await subscribe(sub);

      await sub.publish(encode({ n: 1 }));
      await api(nodeB.port, 'publish', { channel, data: { n: 2 } });
      await api(nodeA.port, 'publish', { channel, data: { n: 3 } });
      const got = await pubs.count(3);
      assert.deepEqual(
        got.map((p) => decode(p.data).n),
        [1, 2, 3],
      );

      const presence = await sub.presence();
      assert.deepEqual(Object.keys(presence.clients), [connected.client]);
      assert.equal(presence.clients[connected.client].user, user);

      // Node B knows of the client only as a session on A: the API on B sees
      // its presence through the engine.
      const viaB = await api(nodeB.port, 'presence', { channel });
      assert.deepEqual(Object.keys(viaB.presence), [connected.client]);
    });
  }
});
