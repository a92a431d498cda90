package admin

import (
	"net/http"
	"time"

	"github.com/heraldhq/herald/hub"
)

// nodeView is one node in the overview.
type nodeView struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Version      string  `json:"version"`
	Uptime       int64   `json:"uptime"`
	Clients      int     `json:"clients"`
	Users        int     `json:"users"`
	Channels     int     `json:"channels"`
	Subs         int     `json:"subscriptions"`
	CPU          float64 `json:"cpu"`
	Memory       uint64  `json:"memory"`
	Publications uint64  `json:"publications"`
	// Self marks the node serving this UI.
	Self bool `json:"self,omitempty"`
}

type overviewResult struct {
	// Time is when the figures were read, in Unix milliseconds, for
	// rates computed in the browser.
	Time  int64      `json:"time"`
	Nodes []nodeView `json:"nodes"`
	// Totals sum the nodes. Users and channels present on several nodes
	// count once per node.
	Totals nodeView `json:"totals"`
}

// overview describes every live node from their heartbeats (this one's
// is fresh).
func (a *Handler) overview(w http.ResponseWriter, _ *http.Request) {
	nodes := a.hub.Nodes()
	res := overviewResult{Time: time.Now().UnixMilli(), Nodes: make([]nodeView, 0, len(nodes))}
	for _, n := range nodes {
		v := viewOf(n)
		v.Self = n.ID == a.hub.NodeID()
		res.Nodes = append(res.Nodes, v)
		t := &res.Totals
		t.Clients += v.Clients
		t.Users += v.Users
		t.Channels += v.Channels
		t.Subs += v.Subs
		t.CPU += v.CPU
		t.Memory += v.Memory
		t.Publications += v.Publications
	}
	writeJSON(w, http.StatusOK, res)
}

func viewOf(n hub.NodeInfo) nodeView {
	return nodeView{
		ID: n.ID, Name: n.Name, Version: n.Version, Uptime: n.Uptime,
		Clients: n.NumClients, Users: n.NumUsers, Channels: n.NumChannels, Subs: n.NumSubs,
		CPU: n.CPU, Memory: n.Memory, Publications: n.Publications,
	}
}
