// A TCP proxy on loopback that a test can cut, to drop a client's network
// the way a real outage does: no close handshake, and no way back until the
// test restores it.
import net from 'node:net';

/** CuttableProxy forwards 127.0.0.1:<port> to a target port. */
export class CuttableProxy {
  /** start resolves with a proxy listening on a free loopback port. */
  static async start(targetPort) {
    const proxy = new CuttableProxy(targetPort);
    await new Promise((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', resolve);
    });
    proxy.port = proxy.server.address().port;
    return proxy;
  }

  constructor(targetPort) {
    this.targetPort = targetPort;
    this.open = true;
    this.sockets = new Set();
    // Bytes forwarded from the target to clients, to see what the wire
    // carried (compression, framing).
    this.bytesDown = 0;
    this.server = net.createServer((client) => this.accept(client));
  }

  accept(client) {
    if (!this.open) {
      client.destroy();
      return;
    }
    const upstream = net.connect({ host: '127.0.0.1', port: this.targetPort });
    upstream.on('data', (chunk) => {
      this.bytesDown += chunk.length;
    });
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ]) {
      this.sockets.add(a);
      a.pipe(b);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.sockets.delete(a);
        b.destroy();
      });
    }
  }

  /** url is the WebSocket endpoint through the proxy. */
  url(path = '/connection/websocket') {
    return `ws://127.0.0.1:${this.port}${path}`;
  }

  /** cut drops every connection and refuses new ones until restore. */
  cut() {
    this.open = false;
    for (const s of this.sockets) s.destroy();
  }

  restore() {
    this.open = true;
  }

  close() {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
