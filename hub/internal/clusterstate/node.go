// Package clusterstate is the hub's bookkeeping of the cluster: the nodes
// heard from by their heartbeats (Registry), what a node tells the others
// about itself (NodeInfo, NodeWire, Sampler), and the answers a survey of
// every node collects (Survey). It knows nothing of clients or of the
// control plane that carries the heartbeats: the hub feeds it.
package clusterstate

import "time"

// Nodes tell each other what they hold with a heartbeat; a node not heard
// from for NodeExpiry is taken as gone.
const (
	HeartbeatInterval = 3 * time.Second
	NodeExpiry        = 3*HeartbeatInterval + time.Second
)

// NodeInfo describes one node of the cluster, as the info API reports it.
type NodeInfo struct {
	ID          string
	Name        string
	Version     string
	NumClients  int
	NumUsers    int
	NumChannels int
	NumSubs     int
	Uptime      int64 // seconds
	// CPU is the node's CPU use over the last heartbeat interval, in
	// percent of one core; Memory the bytes its Go runtime holds. Zero
	// from nodes that do not report them (older versions).
	CPU    float64
	Memory uint64
	// Publications counts the publications the node accepted since it
	// started (its rate is publications per second).
	Publications uint64
}

// NodeWire is NodeInfo as nodes send it to each other in heartbeats. The
// wire shape is kept apart from NodeInfo so the Go type can change without
// breaking a cluster that runs two versions during a rolling upgrade.
type NodeWire struct {
	ID          string `json:"uid"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	NumClients  int    `json:"num_clients"`
	NumUsers    int    `json:"num_users"`
	NumChannels int    `json:"num_channels"`
	NumSubs     int    `json:"num_subs"`
	Uptime      int64  `json:"uptime"`
	// Added later: older nodes leave them out and ignore them.
	CPU    float64 `json:"cpu,omitempty"`
	Memory uint64  `json:"memory,omitempty"`
	Pubs   uint64  `json:"publications,omitempty"`
	// SessionKey verifies the node's emulation sessions (the hub's session.go). It
	// travels only between nodes: NodeInfo, which the APIs report, has no
	// such field.
	SessionKey []byte `json:"session_key,omitempty"`
}

// ToWire is n as nodes send it.
func ToWire(n NodeInfo) *NodeWire {
	return &NodeWire{
		ID: n.ID, Name: n.Name, Version: n.Version,
		NumClients: n.NumClients, NumUsers: n.NumUsers, NumChannels: n.NumChannels, NumSubs: n.NumSubs,
		Uptime: n.Uptime, CPU: n.CPU, Memory: n.Memory, Pubs: n.Publications,
	}
}

// Info is the node a heartbeat describes.
func (w *NodeWire) Info() NodeInfo {
	return NodeInfo{
		ID: w.ID, Name: w.Name, Version: w.Version,
		NumClients: w.NumClients, NumUsers: w.NumUsers, NumChannels: w.NumChannels, NumSubs: w.NumSubs,
		Uptime: w.Uptime, CPU: w.CPU, Memory: w.Memory, Publications: w.Pubs,
	}
}
