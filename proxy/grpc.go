package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/heraldhq/herald/auth"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/heraldhq/herald/proxy/proxyproto"
)

// grpcScheme marks an endpoint served by a gRPC backend implementing
// Centrifugo's proxy.proto (service CentrifugoProxy) at host:port.
const grpcScheme = "grpc"

// grpcEndpoint is the gRPC side of an endpoint: one client connection
// (HTTP/2, multiplexing every call to the backend) and the options of
// each call.
type grpcEndpoint struct {
	conn   *grpc.ClientConn
	client proxyproto.CentrifugoProxyClient
	opts   []grpc.CallOption
}

// isGRPC reports whether the endpoint's URL is grpc://.
func (e Endpoint) isGRPC() bool {
	u, err := url.Parse(e.URL)
	return err == nil && u.Scheme == grpcScheme
}

// newGRPCEndpoint makes e's connection. It does not dial: the connection
// is made on the first call and remade after a failure, so a backend
// that is down at start is only a failed call, as over HTTP.
func newGRPCEndpoint(e Endpoint) (*grpcEndpoint, error) {
	u, err := url.Parse(e.URL)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if e.TLS != nil {
		creds = credentials.NewTLS(e.TLS.Clone())
	}
	conn, err := grpc.NewClient("dns:///"+u.Host, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("grpc client for %s: %w", u.Host, err)
	}
	g := &grpcEndpoint{
		conn:   conn,
		client: proxyproto.NewCentrifugoProxyClient(conn),
		// The same bound on an answer as over HTTP.
		opts: []grpc.CallOption{grpc.MaxCallRecvMsgSize(maxResponseSize)},
	}
	if e.GRPC.Compression {
		g.opts = append(g.opts, grpc.UseCompressor(gzip.Name))
	}
	return g, nil
}

// grpcRoundTrip makes a call over gRPC and returns its answer as the
// HTTP proxy's envelope, so that both kinds of endpoint share call's
// handling of results, errors and disconnects. Any error is a failure.
func grpcRoundTrip[T any](ctx context.Context, e *endpoint, ci callInfo, req any) (*envelope[T], error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout())
	defer cancel()
	ctx = metadata.NewOutgoingContext(ctx, e.metadata(ctx, ci))
	out, err := e.grpc.invoke(ctx, req)
	if err != nil {
		if status.Code(err) == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within %s: %w", e.timeout(), err)
		}
		return nil, err
	}
	env, ok := out.(*envelope[T])
	if !ok {
		// A programming error: invoke answers each request type with its
		// own result type.
		return nil, fmt.Errorf("grpc proxy: %T answered with %T", req, out)
	}
	return env, nil
}

// metadata is a call's gRPC metadata: the forwarded headers (and, for a
// client of the uni_grpc transport, metadata) by lowercase name, as
// Centrifugo sends them, the endpoint's credentials, and the trace
// context.
func (e *endpoint) metadata(ctx context.Context, ci callInfo) metadata.MD {
	h := e.header(ci)
	h.Del("Content-Type") // gRPC sets its own
	e.r.injectTrace(ctx, h)
	md := make(metadata.MD, len(e.GRPC.StaticMetadata)+len(h)+1)
	for k, v := range e.GRPC.StaticMetadata {
		md.Set(k, v)
	}
	for k, vs := range h {
		md[strings.ToLower(k)] = vs
	}
	if e.GRPC.CredentialsKey != "" {
		md.Set(e.GRPC.CredentialsKey, e.GRPC.CredentialsValue)
	}
	return md
}

// invoke sends req, one of the request shapes of wire.go, as its
// proxy.proto message and converts the response back.
func (g *grpcEndpoint) invoke(ctx context.Context, req any) (any, error) {
	switch r := req.(type) {
	case streamRequest:
		return g.openStream(ctx, r)
	case sharedPollRefreshRequest:
		return g.invokeSharedPollRefresh(ctx, r) // sharedpoll.go
	case notifyChannelStateRequest:
		return g.invokeChannelState(ctx, r) // channelstate.go
	case connectRequest:
		resp, err := g.client.Connect(ctx, &proxyproto.ConnectRequest{
			Client: r.Client, Transport: r.Transport, Protocol: r.Protocol, Encoding: r.Encoding,
			Data: r.Data, B64Data: r.B64Data, Name: r.Name, Version: r.Version,
		}, g.opts...)
		if err != nil {
			return nil, err
		}
		env := &envelope[connectResult]{Error: grpcError(resp.GetError()), Disconnect: grpcDisconnect(resp.GetDisconnect())}
		if res := resp.GetResult(); res != nil {
			if len(res.Meta) > 0 && !json.Valid(res.Meta) {
				return nil, fmt.Errorf("connect result: meta is not JSON")
			}
			c := &connectResult{
				User: res.User, ExpireAt: res.ExpireAt, Info: res.Info, B64Info: res.B64Info,
				Data: res.Data, B64Data: res.B64Data, Channels: res.Channels, Meta: res.Meta,
				Caps: grpcCaps(res.Caps),
			}
			if len(res.Subs) > 0 {
				c.Subs = make(map[string]subscribeOptions, len(res.Subs))
				for ch, so := range res.Subs {
					c.Subs[ch] = subscribeOptions{
						ExpireAt: so.GetExpireAt(), Info: so.GetInfo(), B64Info: so.GetB64Info(),
						Data: so.GetData(), B64Data: so.GetB64Data(), Override: grpcOverride(so.GetOverride()),
					}
				}
			}
			env.Result = c
		}
		return env, nil
	case refreshRequest:
		resp, err := g.client.Refresh(ctx, &proxyproto.RefreshRequest{
			Client: r.Client, Transport: r.Transport, Protocol: r.Protocol, Encoding: r.Encoding,
			User: r.User, Meta: r.Meta,
		}, g.opts...)
		if err != nil {
			return nil, err
		}
		env := &envelope[refreshResult]{Error: grpcError(resp.GetError()), Disconnect: grpcDisconnect(resp.GetDisconnect())}
		if res := resp.GetResult(); res != nil {
			env.Result = &refreshResult{Expired: res.Expired, ExpireAt: res.ExpireAt, Info: res.Info, B64Info: res.B64Info, Caps: grpcCaps(res.Caps)}
		}
		return env, nil
	case subscribeRequest:
		resp, err := g.client.Subscribe(ctx, &proxyproto.SubscribeRequest{
			Client: r.Client, Transport: r.Transport, Protocol: r.Protocol, Encoding: r.Encoding,
			User: r.User, Channel: r.Channel, Meta: r.Meta, Data: r.Data, B64Data: r.B64Data,
		}, g.opts...)
		if err != nil {
			return nil, err
		}
		env := &envelope[subscribeResult]{Error: grpcError(resp.GetError()), Disconnect: grpcDisconnect(resp.GetDisconnect())}
		if res := resp.GetResult(); res != nil {
			env.Result = &subscribeResult{
				ExpireAt: res.ExpireAt, Info: res.Info, B64Info: res.B64Info,
				Data: res.Data, B64Data: res.B64Data, Override: grpcOverride(res.Override), Allow: res.Allow,
			}
		}
		return env, nil
	case publishRequest:
		resp, err := g.client.Publish(ctx, &proxyproto.PublishRequest{
			Client: r.Client, Transport: r.Transport, Protocol: r.Protocol, Encoding: r.Encoding,
			User: r.User, Channel: r.Channel, Data: r.Data, B64Data: r.B64Data, Meta: r.Meta,
		}, g.opts...)
		if err != nil {
			return nil, err
		}
		env := &envelope[publishResult]{Error: grpcError(resp.GetError()), Disconnect: grpcDisconnect(resp.GetDisconnect())}
		if res := resp.GetResult(); res != nil {
			env.Result = &publishResult{Data: res.Data, B64Data: res.B64Data, SkipHistory: res.SkipHistory}
		}
		return env, nil
	case subRefreshRequest:
		resp, err := g.client.SubRefresh(ctx, &proxyproto.SubRefreshRequest{
			Client: r.Client, Transport: r.Transport, Protocol: r.Protocol, Encoding: r.Encoding,
			User: r.User, Channel: r.Channel, Meta: r.Meta,
		}, g.opts...)
		if err != nil {
			return nil, err
		}
		env := &envelope[subRefreshResult]{Error: grpcError(resp.GetError()), Disconnect: grpcDisconnect(resp.GetDisconnect())}
		if res := resp.GetResult(); res != nil {
			env.Result = &subRefreshResult{Expired: res.Expired, ExpireAt: res.ExpireAt, Info: res.Info, B64Info: res.B64Info}
		}
		return env, nil
	case rpcRequest:
		resp, err := g.client.RPC(ctx, &proxyproto.RPCRequest{
			Client: r.Client, Transport: r.Transport, Protocol: r.Protocol, Encoding: r.Encoding,
			User: r.User, Method: r.Method, Data: r.Data, B64Data: r.B64Data, Meta: r.Meta,
		}, g.opts...)
		if err != nil {
			return nil, err
		}
		env := &envelope[rpcResult]{Error: grpcError(resp.GetError()), Disconnect: grpcDisconnect(resp.GetDisconnect())}
		if res := resp.GetResult(); res != nil {
			env.Result = &rpcResult{Data: res.Data, B64Data: res.B64Data}
		}
		return env, nil
	case mapPublishRequest, mapRemoveRequest:
		return g.invokeMap(ctx, r)
	}
	return nil, fmt.Errorf("grpc proxy: no method for %T", req)
}

func grpcError(e *proxyproto.Error) *wireError {
	if e == nil {
		return nil
	}
	return &wireError{Code: e.Code, Message: e.Message, Temporary: e.Temporary}
}

func grpcDisconnect(d *proxyproto.Disconnect) *wireDisconnect {
	if d == nil {
		return nil
	}
	return &wireDisconnect{Code: d.Code, Reason: d.Reason}
}

func grpcCaps(cs []*proxyproto.ChannelsCapability) []auth.ChannelCaps {
	if len(cs) == 0 {
		return nil
	}
	out := make([]auth.ChannelCaps, len(cs))
	for i, c := range cs {
		out[i] = auth.ChannelCaps{Channels: c.GetChannels(), Allow: c.GetAllow(), Match: c.GetMatch()}
	}
	return out
}

func grpcOverride(o *proxyproto.SubscribeOptionOverride) *subscribeOverride {
	if o == nil {
		return nil
	}
	b := func(v *proxyproto.BoolValue) *boolValue {
		if v == nil {
			return nil
		}
		return &boolValue{Value: v.Value}
	}
	return &subscribeOverride{
		Presence: b(o.Presence), JoinLeave: b(o.JoinLeave), ForceRecovery: b(o.ForceRecovery),
		ForcePositioning: b(o.ForcePositioning), ForcePushJoinLeave: b(o.ForcePushJoinLeave),
	}
}

// validMetadataKey reports whether s can be a gRPC metadata key: lowercase
// letters, digits, '-', '_' and '.', not ending in "-bin" (binary values
// are base64 on the wire, a string value is not) nor starting with
// "grpc-" (reserved).
func validMetadataKey(s string) bool {
	if s == "" || strings.HasPrefix(s, "grpc-") || strings.HasSuffix(s, "-bin") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// canonicalMetadataNames returns the header-canonical forms of metadata
// keys, the form a connection keeps them in (hub.Client.Header).
func canonicalMetadataNames(keys []string) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, http.CanonicalHeaderKey(k))
	}
	return out
}
