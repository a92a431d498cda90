package hub

import "context"

// RPCPing is a set of handlers (for Chain) that answers the rpc method
// named method with an empty result and passes every other on: Centrifugo's
// built-in rpc.ping (centrifugo v6.9.1 internal/app/run.go, which answers
// it before any proxy), with which a client measures its round trip.
func RPCPing(method string) Handlers {
	return Handlers{OnRPC: func(_ context.Context, _ *Client, ev RPCEvent, reply func(RPCReply, error)) {
		if ev.Method != method {
			reply(RPCReply{}, ErrUseDefault)
			return
		}
		reply(RPCReply{}, nil)
	}}
}
