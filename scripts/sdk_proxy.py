#!/usr/bin/env python3
"""A loopback TCP proxy that spreads connections over several nodes.

scripts/test.sh's "sdk suites 2 nodes" step runs the SDKs' own test suites,
which dial one address (localhost:8000), against two herald nodes on the
PostgreSQL engine. This proxy listens on that address and sends each new
connection to the next node in turn, so that one test's clients (and its
server API calls) land on both nodes and every publication, presence entry
and history read crosses the engine between them.

    sdk_proxy.py LISTEN_PORT NODE_PORT...

It serves until it is killed. Bytes are copied unchanged both ways; a side
that closes its write half closes the other side's too.
"""

import asyncio
import itertools
import sys


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            if writer.can_write_eof():
                writer.write_eof()
        except (OSError, RuntimeError):
            writer.close()


async def serve(listen_port, node_ports):
    turn = itertools.cycle(node_ports)

    async def handle(client_reader, client_writer):
        port = next(turn)
        try:
            node_reader, node_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, node_writer), pipe(node_reader, client_writer))
        node_writer.close()
        client_writer.close()

    # Both the IPv4 and the IPv6 loopback: "localhost" resolves to either.
    servers = []
    for host in ("127.0.0.1", "::1"):
        try:
            servers.append(await asyncio.start_server(handle, host, listen_port, reuse_address=True))
        except OSError:
            if host == "127.0.0.1":
                raise
    await asyncio.gather(*(s.serve_forever() for s in servers))


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: sdk_proxy.py LISTEN_PORT NODE_PORT...")
    ports = [int(a) for a in sys.argv[1:]]
    try:
        asyncio.run(serve(ports[0], ports[1:]))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
