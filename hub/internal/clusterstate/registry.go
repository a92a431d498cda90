package clusterstate

import (
	"sort"
	"sync"
	"time"
)

// Registry is the cluster's one liveness registry: the nodes heard
// from recently, by their heartbeats on the control plane. It answers
// whether a node is alive for routing (emulation, surveys), for the info
// API, and for dropping what a dead node owned. The zero Registry is ready
// to use.
type Registry struct {
	mu    sync.Mutex
	nodes map[string]nodeEntry
}

type nodeEntry struct {
	info       NodeInfo
	sessionKey []byte
	seen       time.Time
}

// Update records a heartbeat and reports whether the node was unknown
// (new, or expired).
func (r *Registry) Update(info NodeInfo) (isNew bool) {
	return r.Beat(info, nil)
}

// Beat records a heartbeat that carries the node's session key (nil
// keeps the key known).
func (r *Registry) Beat(info NodeInfo, sessionKey []byte) (isNew bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nodes == nil {
		r.nodes = make(map[string]nodeEntry)
	}
	old, ok := r.nodes[info.ID]
	if sessionKey == nil {
		sessionKey = old.sessionKey
	}
	r.nodes[info.ID] = nodeEntry{info: info, sessionKey: sessionKey, seen: time.Now()}
	return !ok || time.Since(old.seen) > NodeExpiry
}

// SessionKey returns the session key of node id, and whether the node is
// alive (heard from within NodeExpiry).
func (r *Registry) SessionKey(id string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.nodes[id]
	if !ok || time.Since(e.seen) > NodeExpiry {
		return nil, false
	}
	return e.sessionKey, true
}

// Remove forgets node id (it said it is leaving).
func (r *Registry) Remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.nodes, id)
}

// Expire forgets the nodes not heard from for NodeExpiry and returns
// their ids.
func (r *Registry) Expire() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []string
	for id, e := range r.nodes {
		if time.Since(e.seen) > NodeExpiry {
			delete(r.nodes, id)
			gone = append(gone, id)
		}
	}
	return gone
}

// List returns the live nodes; expired ones are left for expire.
func (r *Registry) List() []NodeInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]NodeInfo, 0, len(r.nodes))
	for _, e := range r.nodes {
		if time.Since(e.seen) > NodeExpiry {
			continue
		}
		out = append(out, e.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name+out[i].ID < out[j].Name+out[j].ID })
	return out
}
