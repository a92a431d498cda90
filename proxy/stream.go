package proxy

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy/proxyproto"
)

// The subscribe-stream proxy (Centrifugo's SubscribeUnidirectional): on a
// subscription to a channel of its namespace, a gRPC stream to the backend
// opens with the subscribe request; its first message decides the
// subscription as a subscribe proxy's answer does, and the publications
// it carries afterwards go to that one subscriber only
// (hub.SubscribeReply.Stream), until the client leaves the channel (the
// stream is cancelled) or the backend ends the stream (the client is
// unsubscribed with 2500 and subscribes again).

const eventSubscribeStream = "subscribe_stream"

// streamRequest asks for a subscribe stream; its answer is a
// streamResult.
type streamRequest struct {
	subscribeRequest
	bidi bool // SubscribeBidirectional rather than SubscribeUnidirectional
}

// streamResult is the first message's subscribe result, with the open
// stream the subscription then reads (and, bidirectional, sends the
// client's publications to).
type streamResult struct {
	subscribeResult
	recv   func() (*proxyproto.StreamSubscribeResponse, error)
	send   func(*proxyproto.StreamSubscribeRequest) error // nil: unidirectional
	cancel context.CancelFunc
}

// openStream opens the stream and reads its first message, within ctx
// (the call's timeout). The stream itself outlives ctx: it ends with its
// cancel function, which the subscription's feed calls, or at once when
// the first message refuses the subscription or does not come.
func (g *grpcEndpoint) openStream(ctx context.Context, r streamRequest) (any, error) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	sreq := &proxyproto.SubscribeRequest{
		Client: r.Client, Transport: r.Transport, Protocol: r.Protocol, Encoding: r.Encoding,
		User: r.User, Channel: r.Channel, Meta: r.Meta, Data: r.Data, B64Data: r.B64Data,
	}
	var (
		recv func() (*proxyproto.StreamSubscribeResponse, error)
		send func(*proxyproto.StreamSubscribeRequest) error
	)
	if r.bidi {
		st, err := g.client.SubscribeBidirectional(sctx, g.opts...)
		if err == nil {
			// The first message carries the subscribe request.
			err = st.Send(&proxyproto.StreamSubscribeRequest{SubscribeRequest: sreq})
		}
		if err != nil {
			cancel()
			return nil, err
		}
		recv, send = st.Recv, st.Send
	} else {
		st, err := g.client.SubscribeUnidirectional(sctx, sreq, g.opts...)
		if err != nil {
			cancel()
			return nil, err
		}
		recv = st.Recv
	}
	first, err := recv()
	if !stop() || err != nil {
		cancel()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	resp := first.GetSubscribeResponse()
	env := &envelope[streamResult]{Error: grpcError(resp.GetError()), Disconnect: grpcDisconnect(resp.GetDisconnect())}
	if env.Error != nil || env.Disconnect != nil {
		cancel()
		return env, nil
	}
	// No subscribe response in the first message allows the subscription
	// as it is; a publication there is against the protocol.
	if first.GetPublication() != nil {
		cancel()
		return nil, fmt.Errorf("the stream's first message carries a publication")
	}
	res := &streamResult{recv: recv, send: send, cancel: cancel}
	if sr := resp.GetResult(); sr != nil {
		res.subscribeResult = subscribeResult{
			ExpireAt: sr.ExpireAt, Info: sr.Info, B64Info: sr.B64Info,
			Data: sr.Data, B64Data: sr.B64Data, Override: grpcOverride(sr.Override),
		}
	}
	env.Result = res
	return env, nil
}

// onSubscribeStream subscribes a client to a channel of a namespace with a
// subscribe-stream proxy. Opening the stream counts as a call (limits,
// metrics, timeout); the stream's life after it does not.
func (r *Router) onSubscribeStream(ctx context.Context, e *endpoint, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
	ns := r.syntax.Namespace(ev.Channel)
	req := streamRequest{subscribeRequest: subscribeRequest{baseRequest: e.base(c.ID(), c.Transport(), c.Protocol()), User: c.User(), Channel: ev.Channel, Meta: e.meta(c)}, bidi: r.streamBidi[ns]}
	req.Data, req.B64Data = e.putData(&req.baseRequest, ev.Data)
	return call(ctx, e, clientCall(eventSubscribeStream, c), req, func(res *streamResult) (hub.SubscribeReply, error) {
		if res == nil {
			return hub.SubscribeReply{}, fmt.Errorf("no stream")
		}
		out := hub.SubscribeReply{ExpireAt: res.ExpireAt, Override: override(res.Override), ServerSideRefresh: true}
		var err error
		if out.Info, err = payload(res.Info, res.B64Info, c.Protocol(), "info"); err != nil {
			res.cancel()
			return hub.SubscribeReply{}, err
		}
		if out.Data, err = payload(res.Data, res.B64Data, c.Protocol(), "data"); err != nil {
			res.cancel()
			return hub.SubscribeReply{}, err
		}
		recv, cancel := res.recv, res.cancel
		if send := res.send; send != nil {
			out.StreamPublish = func(_ context.Context, data []byte) error {
				if err := send(&proxyproto.StreamSubscribeRequest{Publication: &proxyproto.Publication{Data: data}}); err != nil {
					r.log.Warn("proxy stream publish failed", "proxy", e.Name, "client", c.ID(), "channel", ev.Channel, "error", err)
					return errInternal()
				}
				return nil
			}
		}
		out.Stream = func(fctx context.Context, deliver func([]byte, map[string]string) error) error {
			defer cancel()
			stop := context.AfterFunc(fctx, cancel)
			defer stop()
			for {
				msg, err := recv()
				if err != nil {
					return fmt.Errorf("proxy %q: subscribe stream: %w", e.Name, err)
				}
				if p := msg.GetPublication(); p != nil {
					if err := deliver(p.Data, p.Tags); err != nil {
						return fmt.Errorf("proxy %q: subscribe stream: %w", e.Name, err)
					}
				}
			}
		}
		return out, nil
	})
}
