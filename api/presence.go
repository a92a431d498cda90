package api

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/engine"
)

func (a *handler) presence(ctx context.Context, req *channelRequest) (*presenceResult, *Error) {
	m, err := a.hub.Presence(ctx, req.Channel)
	if err != nil {
		return nil, a.fromHub(ctx, "presence", req.Channel, "presence", err)
	}
	var size int64
	for id, ci := range m {
		if size += int64(len(id)) + clientInfoSize(ci); size > a.cfg.MaxResponseSize {
			return nil, a.responseTooLarge("presence", fmt.Sprintf(" with its %d clients: use presence_stats, or connections with the channel (paged)", len(m)))
		}
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
