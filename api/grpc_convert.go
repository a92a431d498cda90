package api

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// Conversions between the generated protobuf messages and the HTTP API's
// request and result types, so that both APIs run the same methods.
// Payloads (data, info) are bytes in protobuf and are passed through as
// they are: over gRPC a publication may be binary without base64, as in
// Centrifugo.

func fromPBPublish(r *apiproto.PublishRequest) *publishRequest {
	return &publishRequest{
		Channel: r.GetChannel(), Data: r.GetData(), B64Data: r.GetB64Data(),
		SkipHistory: r.GetSkipHistory(), Tags: r.GetTags(), IdempotencyKey: r.GetIdempotencyKey(),
		Delta: r.GetDelta(), Version: r.GetVersion(), VersionEpoch: r.GetVersionEpoch(),
	}
}

func fromPBBroadcast(r *apiproto.BroadcastRequest) *broadcastRequest {
	return &broadcastRequest{
		Channels: r.GetChannels(), Data: r.GetData(), B64Data: r.GetB64Data(),
		SkipHistory: r.GetSkipHistory(), Tags: r.GetTags(), IdempotencyKey: r.GetIdempotencyKey(),
		Delta: r.GetDelta(), Version: r.GetVersion(), VersionEpoch: r.GetVersionEpoch(),
	}
}

func toPBPublish(r *publishResult) *apiproto.PublishResult {
	if r == nil {
		return nil
	}
	return &apiproto.PublishResult{Offset: r.Offset, Epoch: r.Epoch}
}

func toPBBroadcast(r *broadcastResult) *apiproto.BroadcastResult {
	if r == nil {
		return nil
	}
	out := &apiproto.BroadcastResult{Responses: make([]*apiproto.PublishResponse, len(r.Responses))}
	for i, p := range r.Responses {
		out.Responses[i] = &apiproto.PublishResponse{Error: ProtoError(p.Error), Result: toPBPublish(p.Result)}
	}
	return out
}

func pbBool(v *apiproto.BoolValue) *boolValue {
	if v == nil {
		return nil
	}
	return &boolValue{Value: v.GetValue()}
}

func fromPBSubscribe(r *apiproto.SubscribeRequest) (*subscribeRequest, *Error) {
	out := &subscribeRequest{
		Channel: r.GetChannel(), User: r.GetUser(), ExpireAt: r.GetExpireAt(),
		Info: r.GetInfo(), B64Info: r.GetB64Info(), Client: r.GetClient(),
		Data: r.GetData(), B64Data: r.GetB64Data(), Session: r.GetSession(),
	}
	if p := r.GetRecoverSince(); p != nil {
		out.RecoverSince = &streamPosition{Offset: p.GetOffset(), Epoch: p.GetEpoch()}
	}
	if o := r.GetOverride(); o != nil {
		b, err := json.Marshal(overrideJSON{
			Presence: pbBool(o.GetPresence()), JoinLeave: pbBool(o.GetJoinLeave()),
			ForceRecovery: pbBool(o.GetForceRecovery()), ForcePositioning: pbBool(o.GetForcePositioning()),
			ForcePushJoinLeave: pbBool(o.GetForcePushJoinLeave()),
		})
		if err != nil {
			return nil, badRequest("override: %v", err)
		}
		out.Override = b
	}
	return out, nil
}

func fromPBUnsubscribe(r *apiproto.UnsubscribeRequest) *unsubscribeRequest {
	return &unsubscribeRequest{Channel: r.GetChannel(), User: r.GetUser(), Client: r.GetClient(), Session: r.GetSession()}
}

func fromPBDisconnect(r *apiproto.DisconnectRequest) *disconnectRequest {
	out := &disconnectRequest{User: r.GetUser(), Client: r.GetClient(), Whitelist: r.GetWhitelist(), Session: r.GetSession()}
	if d := r.GetDisconnect(); d != nil {
		out.Disconnect = &disconnectObject{Code: d.GetCode(), Reason: d.GetReason()}
	}
	return out
}

func fromPBRefresh(r *apiproto.RefreshRequest) *refreshRequest {
	return &refreshRequest{
		User: r.GetUser(), Client: r.GetClient(), Expired: r.GetExpired(),
		ExpireAt: r.GetExpireAt(), Info: r.GetInfo(), Session: r.GetSession(),
	}
}

func fromPBHistory(r *apiproto.HistoryRequest) *historyRequest {
	out := &historyRequest{Channel: r.GetChannel(), Limit: r.GetLimit(), Reverse: r.GetReverse()}
	if p := r.GetSince(); p != nil {
		out.Since = &streamPosition{Offset: p.GetOffset(), Epoch: p.GetEpoch()}
	}
	return out
}

func toPBClientInfo(ci clientInfo) *apiproto.ClientInfo {
	return &apiproto.ClientInfo{User: ci.User, Client: ci.Client, ConnInfo: ci.ConnInfo, ChanInfo: ci.ChanInfo}
}

func toPBPresence(r *presenceResult) *apiproto.PresenceResult {
	if r == nil {
		return nil
	}
	out := &apiproto.PresenceResult{Presence: make(map[string]*apiproto.ClientInfo, len(r.Presence))}
	for id, ci := range r.Presence {
		out.Presence[id] = toPBClientInfo(ci)
	}
	return out
}

func toPBPresenceStats(r *presenceStatsResult) *apiproto.PresenceStatsResult {
	if r == nil {
		return nil
	}
	return &apiproto.PresenceStatsResult{NumClients: r.NumClients, NumUsers: r.NumUsers}
}

func toPBHistory(r *historyResult) *apiproto.HistoryResult {
	if r == nil {
		return nil
	}
	out := &apiproto.HistoryResult{Publications: make([]*apiproto.Publication, len(r.Publications)), Epoch: r.Epoch, Offset: r.Offset}
	for i, p := range r.Publications {
		pb := &apiproto.Publication{Data: p.Data, Offset: p.Offset, Tags: p.Tags}
		if p.Info != nil {
			pb.Info = toPBClientInfo(*p.Info)
		}
		out.Publications[i] = pb
	}
	return out
}

func toPBInfo(r *infoResult) *apiproto.InfoResult {
	if r == nil {
		return nil
	}
	out := &apiproto.InfoResult{Nodes: make([]*apiproto.NodeResult, len(r.Nodes))}
	for i, n := range r.Nodes {
		out.Nodes[i] = &apiproto.NodeResult{
			Uid: n.UID, Name: n.Name, Version: n.Version, NumClients: n.NumClients,
			NumUsers: n.NumUsers, NumChannels: n.NumChannels, Uptime: n.Uptime, NumSubs: n.NumSubs,
		}
	}
	return out
}

func toPBChannels(r *channelsResult) *apiproto.ChannelsResult {
	if r == nil {
		return nil
	}
	out := &apiproto.ChannelsResult{Channels: make(map[string]*apiproto.ChannelInfo, len(r.Channels))}
	for ch, ci := range r.Channels {
		out.Channels[ch] = &apiproto.ChannelInfo{NumClients: ci.NumClients}
	}
	return out
}

func toPBConnection(c hub.ConnectionInfo) *apiproto.ConnectionInfo {
	state := &apiproto.ConnectionState{Channels: make(map[string]*apiproto.ChannelContext, len(c.Channels)), Meta: c.Meta}
	for _, ch := range c.Channels {
		state.Channels[ch] = &apiproto.ChannelContext{}
	}
	return &apiproto.ConnectionInfo{User: c.User, Transport: c.Transport, Protocol: c.Protocol, State: state}
}

func fromPBPresence(r *apiproto.PresenceRequest) *channelRequest {
	return &channelRequest{Channel: r.GetChannel()}
}

func fromPBPresenceStats(r *apiproto.PresenceStatsRequest) *channelRequest {
	return &channelRequest{Channel: r.GetChannel()}
}

func fromPBHistoryRemove(r *apiproto.HistoryRemoveRequest) *channelRequest {
	return &channelRequest{Channel: r.GetChannel()}
}

func fromPBInfo(*apiproto.InfoRequest) *infoRequest { return &infoRequest{} }

func fromPBRPC(r *apiproto.RPCRequest) *rpcRequest {
	return &rpcRequest{Method: r.GetMethod(), Params: r.GetParams()}
}

func fromPBChannels(r *apiproto.ChannelsRequest) *channelsRequest {
	return &channelsRequest{Pattern: r.GetPattern()}
}

// grpcConnections lists every matching connection of the cluster, as
// Centrifugo's answer does (a map by client id, not pages): it reads the
// HTTP API's pages until the last. Centrifugo's expression filter is not
// supported.
func grpcConnections(a *handler, ctx context.Context, req *apiproto.ConnectionsRequest) (*apiproto.ConnectionsResult, *Error) {
	if req.GetExpression() != "" {
		return nil, notAvailable("expression: connection filter expressions are not supported; filter by user")
	}
	out := &apiproto.ConnectionsResult{Connections: map[string]*apiproto.ConnectionInfo{}}
	q := &connectionsRequest{User: req.GetUser(), Limit: hub.MaxConnectionsPage}
	var size int64
	for {
		res, e := a.connections(ctx, q)
		if e != nil {
			return nil, e
		}
		if res.Partial {
			// A node that did not answer would make the map silently
			// incomplete: say so instead.
			return nil, newError(protocol.ErrorInternal, "connections: nodes %v did not answer in time", res.MissingNodes)
		}
		for _, c := range res.Connections {
			pc := toPBConnection(c)
			// The map is built whole (api.proto's result has no
			// cursor): stop once it passes the response limit rather
			// than after the last page.
			if size += int64(proto.Size(pc)+len(c.Client)) + entryOverhead; size > a.cfg.MaxResponseSize {
				return nil, a.responseTooLarge("connections", fmt.Sprintf(" after %d connections: filter by user, or use the HTTP API's connections, which pages", len(out.Connections)))
			}
			out.Connections[c.Client] = pc
		}
		if res.NextCursor == "" {
			return out, nil
		}
		q.Cursor = res.NextCursor
	}
}
