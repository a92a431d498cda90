package proxy

import (
	"context"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// Event names, as in metrics and logs.
const (
	eventConnect    = "connect"
	eventRefresh    = "refresh"
	eventSubscribe  = "subscribe"
	eventPublish    = "publish"
	eventSubRefresh = "sub_refresh"
	eventMapPublish = "map_publish"
	eventMapRemove  = "map_remove"
	eventRPC        = "rpc"
)

// DefaultRPCNamespaceBoundary separates an RPC method's namespace from
// its name unless Config.RPCNamespaceBoundary says otherwise.
const DefaultRPCNamespaceBoundary = ":"

func clientCall(event string, c *hub.Client) callInfo {
	return callInfo{event: event, clientID: c.ID(), header: c.Header(), emulated: c.ConnectHeaders()}
}

// onConnecting authenticates a client that sent no token through the
// backend; a client with a token is checked as a JWT, and the backend is
// not asked (as Centrifugo does).
func (r *Router) onConnecting(ctx context.Context, ev hub.ConnectEvent) (hub.ConnectReply, error) {
	if ev.Token != "" {
		return hub.ConnectReply{}, hub.ErrUseDefault
	}
	e := r.connect
	req := connectRequest{baseRequest: e.base(ev.ClientID, ev.Transport, ev.Protocol), Name: ev.Name, Version: ev.Version}
	req.Data, req.B64Data = e.putData(&req.baseRequest, ev.Data)
	ci := callInfo{event: eventConnect, clientID: ev.ClientID, header: ev.Header, emulated: ev.Headers}
	return call(ctx, e, ci, req, func(res *connectResult) (hub.ConnectReply, error) {
		if res == nil {
			// Never authenticate on an answer that says nothing.
			return hub.ConnectReply{}, fmt.Errorf("response has no result, error or disconnect")
		}
		// As Centrifugo: a connection the backend authenticated is
		// renewed by the refresh proxy when it expires, never by a token
		// the client would have to get.
		out := hub.ConnectReply{User: res.User, ExpireAt: res.ExpireAt, Channels: res.Channels, ServerSideRefresh: true}
		var err error
		if out.Info, err = payload(res.Info, res.B64Info, ev.Protocol, "info"); err != nil {
			return hub.ConnectReply{}, err
		}
		if out.Data, err = payload(res.Data, res.B64Data, ev.Protocol, "data"); err != nil {
			return hub.ConnectReply{}, err
		}
		if len(res.Meta) > 0 && string(res.Meta) != "null" {
			out.Meta = []byte(res.Meta)
		}
		if out.Caps, err = auth.CompileCaps(res.Caps); err != nil {
			return hub.ConnectReply{}, err
		}
		if len(res.Subs) > 0 {
			out.Subs = make(map[string]auth.SubOptions, len(res.Subs))
			for ch, so := range res.Subs {
				o := auth.SubOptions{Override: override(so.Override)}
				if o.Info, err = payload(so.Info, so.B64Info, ev.Protocol, "info"); err != nil {
					return hub.ConnectReply{}, fmt.Errorf("subs[%q]: %w", ch, err)
				}
				if o.Data, err = payload(so.Data, so.B64Data, ev.Protocol, "data"); err != nil {
					return hub.ConnectReply{}, fmt.Errorf("subs[%q]: %w", ch, err)
				}
				out.Subs[ch] = o
			}
		}
		return out, nil
	})
}

// onRefresh extends a connection's expiry through the backend: when
// a connection the connect proxy authenticated expires (the hub asks,
// ev.ServerSide), or on a refresh command without token. A refresh
// command with a token is checked as a JWT.
func (r *Router) onRefresh(ctx context.Context, c *hub.Client, ev hub.RefreshEvent) (hub.RefreshReply, error) {
	if ev.Token != "" {
		return hub.RefreshReply{}, hub.ErrUseDefault
	}
	e := r.refresh
	req := refreshRequest{baseRequest: e.base(c.ID(), c.Transport(), c.Protocol()), User: c.User(), Meta: e.meta(c)}
	return call(ctx, e, clientCall(eventRefresh, c), req, func(res *refreshResult) (hub.RefreshReply, error) {
		if res == nil {
			return hub.RefreshReply{}, nil
		}
		info, err := payload(res.Info, res.B64Info, c.Protocol(), "info")
		if err != nil {
			return hub.RefreshReply{}, err
		}
		// caps absent keep the connection's; present, they replace them.
		caps, err := auth.CompileCaps(res.Caps)
		if err != nil {
			return hub.RefreshReply{}, err
		}
		return hub.RefreshReply{Expired: res.Expired, ExpireAt: res.ExpireAt, Info: info, Caps: caps}, nil
	})
}

// onSubscribe asks the backend of the channel's namespace; without one,
// or when the client sent a subscription token, the hub decides.
func (r *Router) onSubscribe(ctx context.Context, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
	if se := r.subscribeStream[r.syntax.Namespace(ev.Channel)]; se != nil {
		return r.onSubscribeStream(ctx, se, c, ev)
	}
	e := r.subscribe[r.syntax.Namespace(ev.Channel)]
	if e == nil || ev.Token != "" {
		return hub.SubscribeReply{}, hub.ErrUseDefault
	}
	req := subscribeRequest{baseRequest: e.base(c.ID(), c.Transport(), c.Protocol()), User: c.User(), Channel: ev.Channel, Meta: e.meta(c)}
	req.Data, req.B64Data = e.putData(&req.baseRequest, ev.Data)
	return call(ctx, e, clientCall(eventSubscribe, c), req, func(res *subscribeResult) (hub.SubscribeReply, error) {
		if res == nil {
			return hub.SubscribeReply{}, nil
		}
		// Renewed through the sub_refresh proxy at expiry, as Centrifugo.
		out := hub.SubscribeReply{ExpireAt: res.ExpireAt, Override: override(res.Override), ServerSideRefresh: true}
		var err error
		if out.Info, err = payload(res.Info, res.B64Info, c.Protocol(), "info"); err != nil {
			return hub.SubscribeReply{}, err
		}
		if out.Data, err = payload(res.Data, res.B64Data, c.Protocol(), "data"); err != nil {
			return hub.SubscribeReply{}, err
		}
		if out.Allow, err = auth.ParseOps(res.Allow); err != nil {
			return hub.SubscribeReply{}, err
		}
		return out, nil
	})
}

// onPublish asks the backend of the channel's namespace, which may
// refuse, rewrite the data or skip history; without one the hub decides.
func (r *Router) onPublish(ctx context.Context, c *hub.Client, ev hub.PublishEvent) (hub.PublishReply, error) {
	e := r.publish[r.syntax.Namespace(ev.Channel)]
	if e == nil {
		return hub.PublishReply{}, hub.ErrUseDefault
	}
	req := publishRequest{baseRequest: e.base(c.ID(), c.Transport(), c.Protocol()), User: c.User(), Channel: ev.Channel, Meta: e.meta(c)}
	req.Data, req.B64Data = e.putData(&req.baseRequest, ev.Data)
	return call(ctx, e, clientCall(eventPublish, c), req, func(res *publishResult) (hub.PublishReply, error) {
		if res == nil {
			return hub.PublishReply{}, nil
		}
		data, err := payload(res.Data, res.B64Data, c.Protocol(), "data")
		if err != nil {
			return hub.PublishReply{}, err
		}
		return hub.PublishReply{Data: data, SkipHistory: res.SkipHistory}, nil
	})
}

// onSubRefresh extends a subscription through the backend of the
// channel's namespace: when a subscription the subscribe proxy allowed
// expires (the hub asks, ev.ServerSide), or on a sub_refresh command
// without token. A sub_refresh with a token is checked as a JWT.
func (r *Router) onSubRefresh(ctx context.Context, c *hub.Client, ev hub.SubRefreshEvent) (hub.SubRefreshReply, error) {
	e := r.subRefresh[r.syntax.Namespace(ev.Channel)]
	if e == nil || ev.Token != "" {
		return hub.SubRefreshReply{}, hub.ErrUseDefault
	}
	req := subRefreshRequest{baseRequest: e.base(c.ID(), c.Transport(), c.Protocol()), User: c.User(), Channel: ev.Channel, Meta: e.meta(c)}
	return call(ctx, e, clientCall(eventSubRefresh, c), req, func(res *subRefreshResult) (hub.SubRefreshReply, error) {
		if res == nil {
			return hub.SubRefreshReply{}, nil
		}
		info, err := payload(res.Info, res.B64Info, c.Protocol(), "info")
		if err != nil {
			return hub.SubRefreshReply{}, err
		}
		return hub.SubRefreshReply{Expired: res.Expired, ExpireAt: res.ExpireAt, Info: info}, nil
	})
}

// onRPC sends a method to the backend of its namespace. The call runs on
// the client's command goroutine: it holds up that client's later
// commands (whose replies must stay in order) and no one else.
func (r *Router) onRPC(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
	e := r.rpc
	if ns, _, ok := strings.Cut(ev.Method, r.rpcBoundary); ok {
		var declared bool
		if e, declared = r.rpcNamespaces[ns]; !declared {
			reply(hub.RPCReply{}, &hub.Error{Code: protocol.ErrorMethodNotFound, Message: protocol.ErrorMethodNotFound.Message()})
			return
		}
	}
	if e == nil {
		// Not proxied: the next handler in the chain, or the hub (108,
		// not available), answers.
		reply(hub.RPCReply{}, hub.ErrUseDefault)
		return
	}
	req := rpcRequest{baseRequest: e.base(c.ID(), c.Transport(), c.Protocol()), User: c.User(), Method: ev.Method, Meta: e.meta(c)}
	req.Data, req.B64Data = e.putData(&req.baseRequest, ev.Data)
	reply(call(ctx, e, clientCall(eventRPC, c), req, func(res *rpcResult) (hub.RPCReply, error) {
		if res == nil {
			return hub.RPCReply{}, nil
		}
		data, err := payload(res.Data, res.B64Data, c.Protocol(), "data")
		return hub.RPCReply{Data: data}, err
	}))
}

// override converts the backend's option overrides.
func override(o *subscribeOverride) *auth.SubOverride {
	if o == nil {
		return nil
	}
	b := func(v *boolValue) *bool {
		if v == nil {
			return nil
		}
		x := v.Value
		return &x
	}
	return &auth.SubOverride{
		Presence: b(o.Presence), JoinLeave: b(o.JoinLeave), ForceRecovery: b(o.ForceRecovery),
		ForcePositioning: b(o.ForcePositioning), ForcePushJoinLeave: b(o.ForcePushJoinLeave),
	}
}
