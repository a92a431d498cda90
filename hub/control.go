package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub/internal/access"
	"github.com/heraldhq/herald/hub/internal/clusterstate"
	"github.com/heraldhq/herald/protocol"
)

// NodeInfo describes one node of the cluster, as the info API reports it
// (hub/internal/clusterstate keeps the nodes).
type NodeInfo = clusterstate.NodeInfo

// controlMessage travels between nodes through the engine. Exactly one of
// its parts is set.
type controlMessage struct {
	From        string                 `json:"from"`
	Node        *clusterstate.NodeWire `json:"node,omitempty"`
	Leaving     bool                   `json:"leaving,omitempty"`
	Disconnect  *controlDisconnect     `json:"disconnect,omitempty"`
	Unsubscribe *controlUnsubscribe    `json:"unsubscribe,omitempty"`
	Subscribe   *controlSubscribe      `json:"subscribe,omitempty"`
	Refresh     *controlRefresh        `json:"refresh,omitempty"`
	Invalidate  *controlInvalidate     `json:"invalidate,omitempty"`
	Send        *controlSend           `json:"send,omitempty"`
	Emulation   *controlEmulation      `json:"emulation,omitempty"`
	Survey      *controlSurvey         `json:"survey,omitempty"`
	SurveyReply *controlSurveyReply    `json:"survey_reply,omitempty"`
	Access      *access.Change         `json:"access,omitempty"`
	SharedPoll  *controlSharedPoll     `json:"shared_poll,omitempty"` // sharedpoll_api.go
	Trace       *controlTrace          `json:"trace,omitempty"`       // trace_cluster.go
	TraceEvent  *controlTraceEvent     `json:"trace_event,omitempty"`
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
		if h.nodes.Beat(m.Node.Info(), m.Node.SessionKey) && m.From != h.nodeID {
			// A node that just started knows no other node until their
			// next heartbeats; answering its first one at once lets it
			// route emulation requests and surveys to us within a round
			// trip instead of a heartbeat interval.
			h.goBackground(h.announce)
		}
	case m.Leaving:
		if m.From != h.nodeID {
			h.nodes.Remove(m.From)
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
	case m.Access != nil:
		h.applyAccess(*m.Access)
	case m.SharedPoll != nil:
		sp := m.SharedPoll
		h.polls.publish(sp.Channel, sp.Key, sp.Version, sp.Epoch, sp.Data)
	case m.Invalidate != nil:
		h.invalidateLocal(m.Invalidate)
	case m.Trace != nil:
		h.handleTraceControl(m.From, m.Trace)
	case m.TraceEvent != nil:
		h.takeTraceEvent(m.TraceEvent)
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
	cpu, mem := h.process.Sample(h.started)
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
	h.nodes.Beat(info, h.sessionKey)
	ctx, cancel := context.WithTimeout(h.ctx, clusterstate.HeartbeatInterval)
	defer cancel()
	beat := clusterstate.ToWire(info)
	beat.SessionKey = h.sessionKey
	if err := h.sendControl(ctx, controlMessage{Node: beat}); err != nil && h.ctx.Err() == nil {
		h.log.Warn("node heartbeat", "error", err)
	}
}

// heartbeatLoop announces this node to the cluster until the hub closes,
// then tells the others it is leaving.
func (h *Hub) heartbeatLoop() {
	defer h.wg.Done()
	t := time.NewTicker(clusterstate.HeartbeatInterval)
	defer t.Stop()
	for {
		h.announce()
		h.forgetNodes(h.nodes.Expire())
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
				if s.presence {
					if err := h.engine.AddPresence(ctx, s.channel, c.clientInfo(s.chanInfo), h.client.PresenceTTL); err != nil && h.ctx.Err() == nil {
						h.log.Warn("refresh presence", "channel", s.channel, "error", err)
					}
				}
				if s.rule.hasMapPresence() {
					c.touchMapPresence(ctx, s)
				}
				cancel()
			}
			return h.ctx.Err() == nil
		})
	}
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
