package api

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/heraldhq/herald/hub"
)

// clusterWait bounds how long a cluster-wide answer waits for the other
// nodes; a node that has not answered by then is named in the result
// (partial) instead of holding the caller.
const clusterWait = 2 * time.Second

// channels lists the channels with subscribers on any live node, with
// their subscriber counts over the cluster.
func (a *handler) channels(ctx context.Context, req *channelsRequest) (*channelsResult, *Error) {
	ctx, cancel := context.WithTimeout(ctx, clusterWait)
	defer cancel()
	all, missing, err := a.hub.ClusterChannels(ctx, req.Pattern)
	if err != nil {
		return nil, a.fromHub(ctx, "channels", "", "", err)
	}
	var size int64
	for ch := range all {
		if size += int64(len(ch)) + entryOverhead; size > a.cfg.MaxResponseSize {
			return nil, a.responseTooLarge("channels", fmt.Sprintf(" with its %d channels: use a narrower pattern", len(all)))
		}
	}
	res := &channelsResult{Channels: make(map[string]channelInfo, len(all))}
	for ch, n := range all {
		res.Channels[ch] = channelInfo{NumClients: uint32(n)}
	}
	res.Partial, res.MissingNodes = partial(missing)
	return res, nil
}

// connections lists live connections across the cluster, a page at a
// time, by user, channel, both or neither.
func (a *handler) connections(ctx context.Context, req *connectionsRequest) (*connectionsResult, *Error) {
	limit := req.Limit
	switch {
	case limit == 0:
		limit = 100
	case limit < 0 || limit > hub.MaxConnectionsPage:
		return nil, badRequest("limit: %d, want 1 to %d (default 100)", req.Limit, hub.MaxConnectionsPage)
	}
	ctx, cancel := context.WithTimeout(ctx, clusterWait)
	defer cancel()
	page, more, missing, err := a.hub.ClusterConnections(ctx, hub.ConnectionsQuery{
		User: req.User, Channel: req.Channel, After: req.Cursor, Limit: limit,
	})
	if err != nil {
		return nil, a.fromHub(ctx, "connections", req.Channel, "", err)
	}
	res := &connectionsResult{Connections: page}
	if res.Connections == nil {
		res.Connections = []hub.ConnectionInfo{}
	}
	if more {
		res.NextCursor = page[len(page)-1].Client
	}
	res.Partial, res.MissingNodes = partial(missing)
	return res, nil
}

func partial(missing []string) (bool, []string) {
	if len(missing) == 0 {
		return false, nil
	}
	slices.Sort(missing)
	return true, missing
}

// info describes every live node of the cluster, from the nodes'
// heartbeats.
func (a *handler) info(_ context.Context, _ *infoRequest) (*infoResult, *Error) {
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
