package api

import (
	"context"

	"github.com/heraldhq/herald/engine"
)

func (a *handler) presence(ctx context.Context, req *channelRequest) (*presenceResult, *Error) {
	m, err := a.hub.Presence(ctx, req.Channel)
	if err != nil {
		return nil, a.fromHub(ctx, "presence", req.Channel, "presence", err)
	}
	res := &presenceResult{Presence: make(map[string]clientInfo, len(m))}
	for id, ci := range m {
		res.Presence[id] = toClientInfo(ci)
	}
	return res, nil
}

func (a *handler) presenceStats(ctx context.Context, req *channelRequest) (*presenceStatsResult, *Error) {
	st, err := a.hub.PresenceStats(ctx, req.Channel)
	if err != nil {
		return nil, a.fromHub(ctx, "presence_stats", req.Channel, "presence", err)
	}
	return &presenceStatsResult{NumClients: uint32(st.NumClients), NumUsers: uint32(st.NumUsers)}, nil
}

func toClientInfo(ci *engine.ClientInfo) clientInfo {
	return clientInfo{User: ci.User, Client: ci.Client, ConnInfo: ci.ConnInfo, ChanInfo: ci.ChanInfo}
}
