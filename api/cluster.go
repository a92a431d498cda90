package api

import (
	"context"

	"github.com/gobwas/glob"
)

// channels lists this node's channels that have subscribers, with their
// local client counts. Herald cannot ask the other nodes yet (that needs
// a survey between hubs), so in a cluster each node answers for itself.
func (a *handler) channels(_ context.Context, req *channelsRequest) (*channelsResult, *apiError) {
	var g *glob.Pattern
	if req.Pattern != "" {
		var err error
		// No separators, as in Centrifugo: * matches ':' and '/' too.
		if g, err = glob.Compile(req.Pattern); err != nil {
			return nil, badRequest("pattern: %v", err)
		}
	}
	local := a.hub.Channels()
	res := &channelsResult{Channels: make(map[string]channelInfo, len(local))}
	for ch, n := range local {
		if n > 0 && (g == nil || g.Match(ch)) {
			res.Channels[ch] = channelInfo{NumClients: uint32(n)}
		}
	}
	return res, nil
}

// info describes every live node of the cluster, from the nodes'
// heartbeats.
func (a *handler) info(_ context.Context, _ *infoRequest) (*infoResult, *apiError) {
	nodes := a.hub.Nodes()
	res := &infoResult{Nodes: make([]nodeResult, len(nodes))}
	for i, n := range nodes {
		res.Nodes[i] = nodeResult{
			UID: n.ID, Name: n.Name, Version: n.Version,
			NumClients: uint32(n.NumClients), NumUsers: uint32(n.NumUsers),
			NumChannels: uint32(n.NumChannels), NumSubs: uint32(n.NumSubs),
			Uptime: uint32(n.Uptime),
		}
	}
	return res, nil
}
