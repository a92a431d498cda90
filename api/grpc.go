package api

import (
	"context"
	"errors"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// GRPCService is Centrifugo's gRPC API service (centrifugal.centrifugo.api.
// CentrifugoApi) over the same executor as the HTTP API: every method runs
// the HTTP API's method of the same name, with its checks, limits,
// idempotency and error codes, and answers its error inside the response's
// error field, as Centrifugo does. Methods Herald does not have (user
// status, blocking, token revocation, push notifications) answer 108 "not
// available". Authentication is the gRPC server's (package api/grpcapi),
// not the service's.
type GRPCService struct {
	apiproto.UnsafeCentrifugoApiServer
	a *handler
}

var _ apiproto.CentrifugoApiServer = (*GRPCService)(nil)

// NewGRPCService returns the service for h. cfg's Key and Insecure are not
// used (the gRPC server checks the key); MaxBatchCommands, Logger and
// TracerProvider are.
func NewGRPCService(h *hub.Hub, cfg Config) (*GRPCService, error) {
	if h == nil {
		return nil, errors.New("api: hub is required")
	}
	cfg.Insecure = true
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &handler{hub: h, cfg: cfg, log: cfg.Logger}
	if cfg.TracerProvider != nil {
		a.tracer = cfg.TracerProvider.Tracer(tracerName)
	}
	return &GRPCService{a: a}, nil
}

func (s *GRPCService) Publish(ctx context.Context, req *apiproto.PublishRequest) (*apiproto.PublishResponse, error) {
	res, e := s.a.publish(ctx, fromPBPublish(req))
	return &apiproto.PublishResponse{Result: toPBPublish(res), Error: toPBError(e)}, nil
}

func (s *GRPCService) Broadcast(ctx context.Context, req *apiproto.BroadcastRequest) (*apiproto.BroadcastResponse, error) {
	res, e := s.a.broadcast(ctx, fromPBBroadcast(req))
	return &apiproto.BroadcastResponse{Result: toPBBroadcast(res), Error: toPBError(e)}, nil
}

func (s *GRPCService) Subscribe(ctx context.Context, req *apiproto.SubscribeRequest) (*apiproto.SubscribeResponse, error) {
	r, e := fromPBSubscribe(req)
	if e == nil {
		_, e = s.a.subscribe(ctx, r)
	}
	return &apiproto.SubscribeResponse{Result: okOr[apiproto.SubscribeResult](e), Error: toPBError(e)}, nil
}

func (s *GRPCService) Unsubscribe(ctx context.Context, req *apiproto.UnsubscribeRequest) (*apiproto.UnsubscribeResponse, error) {
	_, e := s.a.unsubscribe(ctx, fromPBUnsubscribe(req))
	return &apiproto.UnsubscribeResponse{Result: okOr[apiproto.UnsubscribeResult](e), Error: toPBError(e)}, nil
}

func (s *GRPCService) Disconnect(ctx context.Context, req *apiproto.DisconnectRequest) (*apiproto.DisconnectResponse, error) {
	_, e := s.a.disconnect(ctx, fromPBDisconnect(req))
	return &apiproto.DisconnectResponse{Result: okOr[apiproto.DisconnectResult](e), Error: toPBError(e)}, nil
}

func (s *GRPCService) Refresh(ctx context.Context, req *apiproto.RefreshRequest) (*apiproto.RefreshResponse, error) {
	_, e := s.a.refresh(ctx, fromPBRefresh(req))
	return &apiproto.RefreshResponse{Result: okOr[apiproto.RefreshResult](e), Error: toPBError(e)}, nil
}

func (s *GRPCService) Presence(ctx context.Context, req *apiproto.PresenceRequest) (*apiproto.PresenceResponse, error) {
	res, e := s.a.presence(ctx, &channelRequest{Channel: req.GetChannel()})
	return &apiproto.PresenceResponse{Result: toPBPresence(res), Error: toPBError(e)}, nil
}

func (s *GRPCService) PresenceStats(ctx context.Context, req *apiproto.PresenceStatsRequest) (*apiproto.PresenceStatsResponse, error) {
	res, e := s.a.presenceStats(ctx, &channelRequest{Channel: req.GetChannel()})
	return &apiproto.PresenceStatsResponse{Result: toPBPresenceStats(res), Error: toPBError(e)}, nil
}

func (s *GRPCService) History(ctx context.Context, req *apiproto.HistoryRequest) (*apiproto.HistoryResponse, error) {
	res, e := s.a.history(ctx, fromPBHistory(req))
	return &apiproto.HistoryResponse{Result: toPBHistory(res), Error: toPBError(e)}, nil
}

func (s *GRPCService) HistoryRemove(ctx context.Context, req *apiproto.HistoryRemoveRequest) (*apiproto.HistoryRemoveResponse, error) {
	_, e := s.a.historyRemove(ctx, &channelRequest{Channel: req.GetChannel()})
	return &apiproto.HistoryRemoveResponse{Result: okOr[apiproto.HistoryRemoveResult](e), Error: toPBError(e)}, nil
}

func (s *GRPCService) Info(ctx context.Context, _ *apiproto.InfoRequest) (*apiproto.InfoResponse, error) {
	res, e := s.a.info(ctx, &infoRequest{})
	return &apiproto.InfoResponse{Result: toPBInfo(res), Error: toPBError(e)}, nil
}

func (s *GRPCService) RPC(ctx context.Context, req *apiproto.RPCRequest) (*apiproto.RPCResponse, error) {
	_, e := s.a.rpc(ctx, &rpcRequest{Method: req.GetMethod(), Params: req.GetParams()})
	return &apiproto.RPCResponse{Error: toPBError(e)}, nil
}

func (s *GRPCService) Channels(ctx context.Context, req *apiproto.ChannelsRequest) (*apiproto.ChannelsResponse, error) {
	res, e := s.a.channels(ctx, &channelsRequest{Pattern: req.GetPattern()})
	return &apiproto.ChannelsResponse{Result: toPBChannels(res), Error: toPBError(e)}, nil
}

// Connections lists every matching connection of the cluster, as
// Centrifugo's answer does (a map by client id, not pages): it reads the
// HTTP API's pages until the last. Centrifugo's expression filter is not
// supported.
func (s *GRPCService) Connections(ctx context.Context, req *apiproto.ConnectionsRequest) (*apiproto.ConnectionsResponse, error) {
	if req.GetExpression() != "" {
		return &apiproto.ConnectionsResponse{Error: toPBError(notAvailable("expression: connection filter expressions are not supported; filter by user"))}, nil
	}
	out := &apiproto.ConnectionsResult{Connections: map[string]*apiproto.ConnectionInfo{}}
	q := &connectionsRequest{User: req.GetUser(), Limit: hub.MaxConnectionsPage}
	for {
		res, e := s.a.connections(ctx, q)
		if e != nil {
			return &apiproto.ConnectionsResponse{Error: toPBError(e)}, nil
		}
		if res.Partial {
			// A node that did not answer would make the map silently
			// incomplete: say so instead.
			return &apiproto.ConnectionsResponse{Error: toPBError(newError(protocol.ErrorInternal, "connections: nodes %v did not answer in time", res.MissingNodes))}, nil
		}
		for _, c := range res.Connections {
			out.Connections[c.Client] = toPBConnection(c)
		}
		if res.NextCursor == "" {
			return &apiproto.ConnectionsResponse{Result: out}, nil
		}
		q.Cursor = res.NextCursor
	}
}

// okOr returns an empty result when e is nil, nil otherwise: a response
// carries either its result or its error.
func okOr[T any](e *apiError) *T {
	if e != nil {
		return nil
	}
	return new(T)
}
