// Endpoint paths moved with the handler_prefix keys (as a Centrifugo
// configuration moves them): centrifuge-js connects over WebSocket,
// HTTP-streaming and SSE at the configured paths, with its commands through
// the moved emulation endpoint, and receives a publication sent to the API
// at its moved prefix; the default paths answer 404.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { connect, subscribe, waitEvent } from './lib/events.mjs';
import { connectionToken, startHerald } from './lib/herald.mjs';
import { PATHS, api, httpBase, transportClient, transportConfig } from './lib/transports.mjs';

const MOVED = {
  websocket: '/rt/ws',
  http_stream: '/rt/stream',
  sse: '/rt/events',
  emulation: '/rt/emulation',
};
const API_PREFIX = '/rt/api';

let herald;

before(async () => {
  herald = await startHerald(
    transportConfig({
      websocket: { handler_prefix: MOVED.websocket },
      http_stream: { enabled: true, handler_prefix: MOVED.http_stream },
      sse: { enabled: true, handler_prefix: MOVED.sse },
      emulation: { handler_prefix: MOVED.emulation },
      http_api: { handler_prefix: API_PREFIX },
      channel: { without_namespace: { allow_subscribe_for_client: true } },
    }),
  );
});

after(async () => {
  await herald?.stop();
});

for (const transport of ['websocket', 'http_stream', 'sse']) {
  test(`centrifuge-js over ${transport} at its moved path`, async (t) => {
    const client = transportClient(herald.port, transport, { paths: MOVED, token: connectionToken(`u-${transport}`) });
    t.after(() => client.disconnect());
    const connected = await connect(client);
    assert.equal(connected.transport, transport);
    const sub = client.newSubscription(`moved-${transport}`);
    await subscribe(sub);
    const received = waitEvent(sub, 'publication');
    await api(herald.port, 'publish', { channel: `moved-${transport}`, data: { via: transport } }, { prefix: API_PREFIX });
    assert.deepEqual((await received).data, { via: transport });
  });
}

test('the default paths are not served', async () => {
  for (const path of [PATHS.websocket, PATHS.http_stream, PATHS.sse, PATHS.emulation, '/api/publish']) {
    const res = await fetch(`${httpBase(herald.port)}${path}`, { method: 'POST', body: '{}' });
    await res.arrayBuffer();
    assert.equal(res.status, 404, path);
  }
});
