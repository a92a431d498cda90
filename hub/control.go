package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// Nodes tell each other what they hold with a heartbeat; a node not heard
// from for nodeExpiry is taken as gone.
const (
	heartbeatInterval = 3 * time.Second
	nodeExpiry        = 3*heartbeatInterval + time.Second
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

// nodeWire is NodeInfo as nodes send it to each other in heartbeats. The
// wire shape is kept apart from NodeInfo so the Go type can change without
// breaking a cluster that runs two versions during a rolling upgrade.
type nodeWire struct {
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
	// SessionKey verifies the node's emulation sessions (session.go). It
	// travels only between nodes: NodeInfo, which the APIs report, has no
	// such field.
	SessionKey []byte `json:"session_key,omitempty"`
}

func nodeToWire(n NodeInfo) *nodeWire {
	return &nodeWire{
		ID: n.ID, Name: n.Name, Version: n.Version,
		NumClients: n.NumClients, NumUsers: n.NumUsers, NumChannels: n.NumChannels, NumSubs: n.NumSubs,
		Uptime: n.Uptime, CPU: n.CPU, Memory: n.Memory, Pubs: n.Publications,
	}
}

func (w *nodeWire) info() NodeInfo {
	return NodeInfo{
		ID: w.ID, Name: w.Name, Version: w.Version,
		NumClients: w.NumClients, NumUsers: w.NumUsers, NumChannels: w.NumChannels, NumSubs: w.NumSubs,
		Uptime: w.Uptime, CPU: w.CPU, Memory: w.Memory, Publications: w.Pubs,
	}
}

// controlMessage travels between nodes through the engine. Exactly one of
// its parts is set.
type controlMessage struct {
	From        string              `json:"from"`
	Node        *nodeWire           `json:"node,omitempty"`
	Leaving     bool                `json:"leaving,omitempty"`
	Disconnect  *controlDisconnect  `json:"disconnect,omitempty"`
	Unsubscribe *controlUnsubscribe `json:"unsubscribe,omitempty"`
	Subscribe   *controlSubscribe   `json:"subscribe,omitempty"`
	Refresh     *controlRefresh     `json:"refresh,omitempty"`
	Send        *controlSend        `json:"send,omitempty"`
	Emulation   *controlEmulation   `json:"emulation,omitempty"`
	Survey      *controlSurvey      `json:"survey,omitempty"`
	SurveyReply *controlSurveyReply `json:"survey_reply,omitempty"`
}

// controlSend pushes an asynchronous message to a user's connections.
type controlSend struct {
	User   string `json:"user"`
	Client string `json:"client,omitempty"`
	Data   []byte `json:"data"`
}

// controlSubscribe subscribes a user's connections to a channel from the
// server side.
type controlSubscribe struct {
	User         string              `json:"user"`
	Channel      string              `json:"channel"`
	Client       string              `json:"client,omitempty"`
	Session      string              `json:"session,omitempty"`
	Override     *auth.SubOverride   `json:"override,omitempty"`
	Info         []byte              `json:"info,omitempty"`
	Data         []byte              `json:"data,omitempty"`
	ExpireAt     int64               `json:"expire_at,omitempty"`
	RecoverSince *streamPositionWire `json:"recover_since,omitempty"`
}

// streamPositionWire is StreamPositionArg in a control message.
type streamPositionWire struct {
	Offset uint64 `json:"offset"`
	Epoch  string `json:"epoch"`
}

func streamPositionToWire(p *StreamPositionArg) *streamPositionWire {
	if p == nil {
		return nil
	}
	return &streamPositionWire{Offset: p.Offset, Epoch: p.Epoch}
}

// controlRefresh updates the expiry of a user's connections.
type controlRefresh struct {
	User     string `json:"user"`
	Client   string `json:"client,omitempty"`
	Session  string `json:"session,omitempty"`
	Expired  bool   `json:"expired,omitempty"`
	ExpireAt int64  `json:"expire_at,omitempty"`
	Info     []byte `json:"info,omitempty"`
}

type controlDisconnect struct {
	User      string   `json:"user"`
	Client    string   `json:"client,omitempty"`
	Session   string   `json:"session,omitempty"`
	Whitelist []string `json:"whitelist,omitempty"`
	Code      uint32   `json:"code"`
	Reason    string   `json:"reason"`
}

type controlUnsubscribe struct {
	User    string `json:"user"`
	Channel string `json:"channel"`
	Client  string `json:"client,omitempty"`
	Session string `json:"session,omitempty"`
}

// sendControl sends m to every node, this one included.
func (h *Hub) sendControl(ctx context.Context, m controlMessage) error {
	return h.sendControlTo(ctx, m, "")
}

// sendControlTo sends m to node alone, or to every node when node is empty.
func (h *Hub) sendControlTo(ctx context.Context, m controlMessage, node string) error {
	m.From = h.nodeID
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode control message: %w", err)
	}
	if err := h.engine.PublishControl(ctx, data, node); err != nil {
		return fmt.Errorf("send control message: %w", err)
	}
	return nil
}

func (h *Hub) handleControl(data []byte) {
	var m controlMessage
	if err := json.Unmarshal(data, &m); err != nil {
		h.log.Error("malformed control message", "error", err)
		return
	}
	switch {
	case m.Node != nil:
		if h.nodes.beat(m.Node.info(), m.Node.SessionKey) && m.From != h.nodeID {
			// A node that just started knows no other node until their
			// next heartbeats; answering its first one at once lets it
			// route emulation requests and surveys to us within a round
			// trip instead of a heartbeat interval.
			h.goBackground(h.announce)
		}
	case m.Leaving:
		if m.From != h.nodeID {
			h.nodes.remove(m.From)
			h.forgetNodes([]string{m.From})
		}
	case m.Disconnect != nil:
		d := m.Disconnect
		for _, c := range h.users.clients(d.User) {
			if c.targeted(d.Client, d.Session) && !slices.Contains(d.Whitelist, c.id) {
				go c.close(&Disconnect{Code: d.Code, Reason: d.Reason})
			}
		}
	case m.Unsubscribe != nil:
		u := m.Unsubscribe
		for _, c := range h.users.clients(u.User) {
			if !c.targeted(u.Client, u.Session) {
				continue
			}
			ch := u.Channel
			c.runServerTask(func(context.Context) {
				if ch == "" {
					c.serverUnsubscribeAll()
				} else {
					c.serverUnsubscribe(ch, protocol.UnsubscribeServer)
				}
			})
		}
	case m.Subscribe != nil:
		s := m.Subscribe
		for _, c := range h.users.clients(s.User) {
			if c.targeted(s.Client, s.Session) {
				c.runServerTask(func(ctx context.Context) { c.serverSubscribe(ctx, s) })
			}
		}
	case m.Send != nil:
		sd := m.Send
		for _, c := range h.users.clients(sd.User) {
			if sd.Client == "" || sd.Client == c.id {
				if err := c.Send(sd.Data); err != nil {
					c.logger().Debug("send to user", "error", err)
				}
			}
		}
	case m.Survey != nil:
		h.answerSurvey(m.From, m.Survey)
	case m.SurveyReply != nil:
		h.takeSurveyReply(m.From, m.SurveyReply)
	case m.Emulation != nil:
		if e := m.Emulation; e.Node == h.nodeID {
			if err := h.emulateLocal(e.Session, e.Data); err != nil {
				h.log.Debug("emulation request from another node", "session", e.Session, "error", err)
			}
		}
	case m.Refresh != nil:
		r := m.Refresh
		for _, c := range h.users.clients(r.User) {
			if c.targeted(r.Client, r.Session) {
				c.runServerTask(func(context.Context) { c.serverRefresh(r) })
			}
		}
	}
}

func (h *Hub) localNodeInfo() NodeInfo {
	cpu, mem := h.process.sample(h.started)
	return NodeInfo{
		CPU: cpu, Memory: mem, Publications: h.published.Load(),
		ID: h.nodeID, Name: h.cfg.Name, Version: h.cfg.Version,
		NumClients: h.NumClients(), NumUsers: h.NumUsers(),
		NumChannels: h.NumChannels(), NumSubs: h.NumSubscriptions(),
		Uptime: int64(time.Since(h.started) / time.Second),
	}
}

// announce sends this node's heartbeat.
func (h *Hub) announce() {
	info := h.localNodeInfo()
	h.nodes.beat(info, h.sessionKey)
	ctx, cancel := context.WithTimeout(h.ctx, heartbeatInterval)
	defer cancel()
	beat := nodeToWire(info)
	beat.SessionKey = h.sessionKey
	if err := h.sendControl(ctx, controlMessage{Node: beat}); err != nil && h.ctx.Err() == nil {
		h.log.Warn("node heartbeat", "error", err)
	}
}

// heartbeatLoop announces this node to the cluster until the hub closes,
// then tells the others it is leaving.
func (h *Hub) heartbeatLoop() {
	defer h.wg.Done()
	t := time.NewTicker(heartbeatInterval)
	defer t.Stop()
	for {
		h.announce()
		h.forgetNodes(h.nodes.expire())
		select {
		case <-h.ctx.Done():
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = h.sendControl(ctx, controlMessage{Leaving: true})
			cancel()
			return
		case <-t.C:
		}
	}
}

// presenceLoop re-adds the presence of this node's clients well within
// the presence TTL, so entries of a node that died expire on their own.
func (h *Hub) presenceLoop() {
	defer h.wg.Done()
	t := time.NewTicker(h.client.PresenceTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		h.allConns.Range(func(k, _ any) bool {
			c := k.(*Client)
			for _, s := range c.presenceSubs() {
				ctx, cancel := context.WithTimeout(h.ctx, h.client.CommandTimeout)
				if err := h.engine.AddPresence(ctx, s.channel, c.clientInfo(s.chanInfo), h.client.PresenceTTL); err != nil && h.ctx.Err() == nil {
					h.log.Warn("refresh presence", "channel", s.channel, "error", err)
				}
				cancel()
			}
			return h.ctx.Err() == nil
		})
	}
}

func (c *Client) presenceSubs() []*subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*subscription
	for _, s := range c.subs {
		if s.presence && s.active && !s.syncing {
			out = append(out, s)
		}
	}
	return out
}

// forgetNodes tells an engine that keeps records owned by nodes
// (engine.NodeForgetter) that these nodes are gone, off the caller's
// goroutine. Every live node does it: the call is idempotent, and cheap
// next to a node's death.
func (h *Hub) forgetNodes(ids []string) {
	f, ok := h.engine.(engine.NodeForgetter)
	if !ok || len(ids) == 0 {
		return
	}
	h.goBackground(func() {
		for _, id := range ids {
			ctx, cancel := context.WithTimeout(h.ctx, h.client.CommandTimeout)
			if err := f.ForgetNode(ctx, id); err != nil && h.ctx.Err() == nil {
				h.log.Warn("forget a node that is gone", "node", id, "error", err)
			}
			cancel()
		}
	})
}

// nodeRegistry is the cluster's one liveness registry: the nodes heard
// from recently, by their heartbeats on the control plane. It answers
// whether a node is alive for routing (emulation, surveys), for the info
// API, and for dropping what a dead node owned (forgetNodes).
type nodeRegistry struct {
	mu    sync.Mutex
	nodes map[string]nodeEntry
}

type nodeEntry struct {
	info       NodeInfo
	sessionKey []byte
	seen       time.Time
}

func (r *nodeRegistry) init() { r.nodes = make(map[string]nodeEntry) }

// update records a heartbeat and reports whether the node was unknown
// (new, or expired).
func (r *nodeRegistry) update(info NodeInfo) (isNew bool) {
	return r.beat(info, nil)
}

// beat records a heartbeat that carries the node's session key (nil
// keeps the key known).
func (r *nodeRegistry) beat(info NodeInfo, sessionKey []byte) (isNew bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.nodes[info.ID]
	if sessionKey == nil {
		sessionKey = old.sessionKey
	}
	r.nodes[info.ID] = nodeEntry{info: info, sessionKey: sessionKey, seen: time.Now()}
	return !ok || time.Since(old.seen) > nodeExpiry
}

// sessionKey returns the session key of node id, and whether the node is
// alive (heard from within nodeExpiry).
func (r *nodeRegistry) sessionKey(id string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.nodes[id]
	if !ok || time.Since(e.seen) > nodeExpiry {
		return nil, false
	}
	return e.sessionKey, true
}

func (r *nodeRegistry) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.nodes, id)
}

// expire forgets the nodes not heard from for nodeExpiry and returns
// their ids.
func (r *nodeRegistry) expire() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []string
	for id, e := range r.nodes {
		if time.Since(e.seen) > nodeExpiry {
			delete(r.nodes, id)
			gone = append(gone, id)
		}
	}
	return gone
}

// list returns the live nodes; expired ones are left for expire.
func (r *nodeRegistry) list() []NodeInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]NodeInfo, 0, len(r.nodes))
	for _, e := range r.nodes {
		if time.Since(e.seen) > nodeExpiry {
			continue
		}
		out = append(out, e.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name+out[i].ID < out[j].Name+out[j].ID })
	return out
}
