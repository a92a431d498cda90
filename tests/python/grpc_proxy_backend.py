"""A gRPC proxy backend for Herald, generated from Centrifugo's proxy.proto.

Run as `python grpc_proxy_backend.py GEN_DIR PORT`: GEN_DIR holds the
modules grpcio-tools generated from proxy/proxyproto/proxy.proto
(proxy_pb2, proxy_pb2_grpc). It prints "ready" once it listens on
127.0.0.1:PORT, and serves until killed. What it answers (the tests in
test_grpc_proxy.py rely on it):

- Connect: the user from the connect data's "user", else from the x-user
  metadata (the X-User header Herald forwards); without one, disconnect 4501.
- Subscribe: "px:py-denied" is refused with error 403; other channels are
  allowed with data {"initial": channel, "user": user}.
- Publish: "px:py-readonly" is refused with error 1403; "px:py-rewrite" is
  rewritten to {"original": data, "rewritten": true, "by": user}.
- RPC: "echo" answers {"data": data, "user": user, "secret": the
  x-backend-key metadata}; "reverse" answers the request's encoding, ":"
  and its data bytes reversed (for Protobuf clients' binary payloads);
  "error" answers error 1500; "hang" never answers (until Herald gives up
  on the call).
- SubscribeUnidirectional: answers the subscription, then streams the
  publications {"n": 1} .. {"n": 3} and holds the stream open.
- SubscribeBidirectional: answers the subscription, then sends every
  publication the client makes back as {"echo": data, "user": user}.
"""

import json
import sys
import threading
from concurrent import futures

import grpc

sys.path.insert(0, sys.argv[1])
import proxy_pb2  # noqa: E402
import proxy_pb2_grpc  # noqa: E402

SUBSCRIBE_DENIED = 403
PUBLISH_DENIED = 1403
RPC_ERROR = 1500
NO_USER = 4501


def _meta(context, key):
    for k, v in context.invocation_metadata():
        if k == key:
            return v
    return None


def _json(data):
    return json.loads(data) if data else None


class Backend(proxy_pb2_grpc.CentrifugoProxyServicer):
    def Connect(self, request, context):
        data = _json(request.data) or {}
        user = data.get("user") or _meta(context, "x-user")
        if not user:
            return proxy_pb2.ConnectResponse(disconnect=proxy_pb2.Disconnect(code=NO_USER, reason="no user"))
        welcome = {"welcome": user, "client": request.client, "transport": request.transport}
        return proxy_pb2.ConnectResponse(
            result=proxy_pb2.ConnectResult(user=user, data=json.dumps(welcome).encode())
        )

    def Subscribe(self, request, context):
        if request.channel == "px:py-denied":
            return proxy_pb2.SubscribeResponse(error=proxy_pb2.Error(code=SUBSCRIBE_DENIED, message="denied"))
        initial = {"initial": request.channel, "user": request.user}
        return proxy_pb2.SubscribeResponse(result=proxy_pb2.SubscribeResult(data=json.dumps(initial).encode()))

    def Publish(self, request, context):
        if request.channel == "px:py-readonly":
            return proxy_pb2.PublishResponse(error=proxy_pb2.Error(code=PUBLISH_DENIED, message="read only"))
        if request.channel == "px:py-rewrite":
            out = {"original": _json(request.data), "rewritten": True, "by": request.user}
            return proxy_pb2.PublishResponse(result=proxy_pb2.PublishResult(data=json.dumps(out).encode()))
        return proxy_pb2.PublishResponse(result=proxy_pb2.PublishResult())

    def RPC(self, request, context):
        if request.method == "echo":
            out = {"data": _json(request.data), "user": request.user, "secret": _meta(context, "x-backend-key")}
            return proxy_pb2.RPCResponse(result=proxy_pb2.RPCResult(data=json.dumps(out).encode()))
        if request.method == "reverse":
            out = request.encoding.encode() + b":" + bytes(reversed(request.data))
            return proxy_pb2.RPCResponse(result=proxy_pb2.RPCResult(data=out))
        if request.method == "hang":
            # Herald's timeout cancels the call, which ends the wait.
            done = threading.Event()
            context.add_callback(done.set)
            done.wait(60)
            return proxy_pb2.RPCResponse()
        return proxy_pb2.RPCResponse(error=proxy_pb2.Error(code=RPC_ERROR, message="backend error"))

    def SubscribeUnidirectional(self, request, context):
        initial = {"stream": request.channel, "user": request.user}
        yield proxy_pb2.StreamSubscribeResponse(
            subscribe_response=proxy_pb2.SubscribeResponse(
                result=proxy_pb2.SubscribeResult(data=json.dumps(initial).encode())
            )
        )
        for n in (1, 2, 3):
            yield proxy_pb2.StreamSubscribeResponse(
                publication=proxy_pb2.Publication(data=json.dumps({"n": n}).encode())
            )
        # Hold the stream until Herald ends it (the client unsubscribed).
        done = threading.Event()
        context.add_callback(done.set)
        done.wait(60)

    def SubscribeBidirectional(self, request_iterator, context):
        first = next(request_iterator).subscribe_request
        yield proxy_pb2.StreamSubscribeResponse(
            subscribe_response=proxy_pb2.SubscribeResponse(result=proxy_pb2.SubscribeResult())
        )
        for msg in request_iterator:
            if msg.HasField("publication"):
                out = {"echo": _json(msg.publication.data), "user": first.user}
                yield proxy_pb2.StreamSubscribeResponse(publication=proxy_pb2.Publication(data=json.dumps(out).encode()))


def main():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    proxy_pb2_grpc.add_CentrifugoProxyServicer_to_server(Backend(), server)
    server.add_insecure_port(f"127.0.0.1:{sys.argv[2]}")
    server.start()
    print("ready", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
