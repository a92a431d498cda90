package hub

import (
	"context"
	"errors"
	"fmt"
)

// Emulated connections.
//
// An HTTP-streaming or SSE client reads its replies from one long HTTP
// response and sends its later commands as separate POSTs to the
// emulation endpoint, which a load balancer may send to any node. The
// connect result tells the client its session and node; HandleEmulation
// hands the commands to the session's client on this node, or sends them
// to the node that holds it through the engine's control messages.

// ErrUnknownSession is returned by HandleEmulation for a session this node
// does not hold (never opened, or closed).
var ErrUnknownSession = errors.New("unknown emulation session")

// ErrUnknownNode is returned by HandleEmulation for a node that is not a
// live member of the cluster.
var ErrUnknownNode = errors.New("unknown node")

// EmulationRequest carries commands for an emulated session: Data is a
// frame of commands in the session's protocol, as the client sent it.
type EmulationRequest struct {
	Node    string
	Session string
	Data    []byte
}

// controlEmulation is an EmulationRequest on its way to the node that
// holds the session.
type controlEmulation struct {
	Node    string `json:"node"`
	Session string `json:"session"`
	Data    []byte `json:"data"`
}

// HandleEmulation delivers commands for an emulated session. A session on
// this node (or with no node named) is handled here; otherwise the request
// goes to its node, which must be alive, and nil means it was sent, not
// that the session exists there. A malformed frame closes the session's
// connection as it would on the connection itself.
func (h *Hub) HandleEmulation(ctx context.Context, req EmulationRequest) error {
	if req.Node == "" || req.Node == h.nodeID {
		return h.emulateLocal(req.Session, req.Data)
	}
	if !h.nodeAlive(req.Node) {
		return fmt.Errorf("%w: %q", ErrUnknownNode, req.Node)
	}
	return h.sendControl(ctx, controlMessage{Emulation: &controlEmulation{
		Node: req.Node, Session: req.Session, Data: req.Data,
	}})
}

func (h *Hub) emulateLocal(session string, data []byte) error {
	v, ok := h.sessions.Load(session)
	if !ok {
		return ErrUnknownSession
	}
	c := v.(*Client)
	if !c.HandleFrame(data) {
		return fmt.Errorf("%w: connection closed", ErrUnknownSession)
	}
	return nil
}

// nodeAlive reports whether id is a node the heartbeats know of.
func (h *Hub) nodeAlive(id string) bool {
	for _, n := range h.nodes.list() {
		if n.ID == id {
			return true
		}
	}
	return false
}
