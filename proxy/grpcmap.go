package proxy

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/proxy/proxyproto"
)

// invokeMap sends a map publish or map remove request as proxy.proto's
// MapPublish or MapRemove (Centrifugo 6.9.1's internal/proxyproto/
// proxy.proto) and answers the envelope onMapPublish reads over HTTP too:
// both results become a mapPublishResult, whose unsupported fields fail
// the command whichever way they came.
func (g *grpcEndpoint) invokeMap(ctx context.Context, req any) (any, error) {
	switch r := req.(type) {
	case mapPublishRequest:
		resp, err := g.client.MapPublish(ctx, &proxyproto.MapPublishRequest{
			Client: r.Client, Transport: r.Transport, Protocol: r.Protocol, Encoding: r.Encoding,
			User: r.User, Channel: r.Channel, Key: r.Key, Data: r.Data, B64Data: r.B64Data, Meta: r.Meta,
		}, g.opts...)
		if err != nil {
			return nil, err
		}
		env := &envelope[mapPublishResult]{Error: grpcError(resp.GetError()), Disconnect: grpcDisconnect(resp.GetDisconnect())}
		if res := resp.GetResult(); res != nil {
			env.Result = &mapPublishResult{
				Key: res.Key, Data: res.Data, B64Data: res.B64Data, Tags: res.Tags, Score: res.Score,
				KeyMode: res.KeyMode, StreamData: res.StreamData, B64StreamData: res.B64StreamData,
				IdempotencyKey: res.IdempotencyKey, Delta: res.Delta, Version: res.Version, VersionEpoch: res.VersionEpoch,
			}
		}
		return env, nil
	case mapRemoveRequest:
		resp, err := g.client.MapRemove(ctx, &proxyproto.MapRemoveRequest{
			Client: r.Client, Transport: r.Transport, Protocol: r.Protocol, Encoding: r.Encoding,
			User: r.User, Channel: r.Channel, Key: r.Key, Meta: r.Meta,
		}, g.opts...)
		if err != nil {
			return nil, err
		}
		env := &envelope[mapPublishResult]{Error: grpcError(resp.GetError()), Disconnect: grpcDisconnect(resp.GetDisconnect())}
		if res := resp.GetResult(); res != nil {
			env.Result = &mapPublishResult{Key: res.Key, Tags: res.Tags, IdempotencyKey: res.IdempotencyKey}
		}
		return env, nil
	}
	return nil, fmt.Errorf("grpc proxy: no map method for %T", req)
}
