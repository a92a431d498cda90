package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/keyedlimit"
)

// Emulated connections.
//
// An HTTP-streaming or SSE client reads its replies from one long HTTP
// response and sends its later commands as separate POSTs to the
// emulation endpoint, which a load balancer may send to any node. The
// connect result tells the client its session and node; HandleEmulation
// hands the commands to the session's client on this node, or sends them
// to the node that holds it, and to that node alone, as a targeted
// control message.
//
// The endpoint needs no token (the session is the credential), so
// everything is checked before anything crosses nodes: the request rate of
// the client's address, the session's MAC (session.go: a forged session is
// refused here, with no engine call), the session's own request rate, and
// the size of what is forwarded, which always fits one message of every
// engine (a PostgreSQL notification: nothing of it is ever written to a
// table).

// ErrUnknownSession is returned by HandleEmulation for a session the named
// node did not make, or that this node does not hold (closed, or never
// opened).
var ErrUnknownSession = errors.New("unknown emulation session")

// ErrUnknownNode is returned by HandleEmulation for a node that is not a
// live member of the cluster.
var ErrUnknownNode = errors.New("unknown node")

// ErrEmulationRateLimited is returned by HandleEmulation when the client's
// address or the session sent more requests than EmulationLimits allow.
var ErrEmulationRateLimited = errors.New("too many emulation requests")

// ErrEmulationTooLarge is returned by HandleEmulation for commands bound
// for another node that exceed MaxForwardedEmulation.
var ErrEmulationTooLarge = errors.New("emulation request too large to forward to another node")

// MaxForwardedEmulation bounds the commands of one emulation request that
// goes to another node, in bytes. With its envelope it fits a PostgreSQL
// notification (8000 bytes), so it is never spilled to a table. A client
// whose load balancer keeps its POSTs on its stream's node is not bound by
// it (only by the transport's body limit).
const MaxForwardedEmulation = 4096

// EmulationLimits bounds the requests HandleEmulation takes. Zero fields
// take the defaults below; a negative rate turns that limit off.
type EmulationLimits struct {
	// PerAddress is the requests per second one client address may send
	// (EmulationRequest.Addr), PerAddressBurst how many at once.
	PerAddress      float64 `yaml:"per_address_rate" default:"200" doc:"emulation requests per second one client address may send (behind 'websocket.trusted_proxies': the forwarded address); over it, '429'. A negative rate turns the limit off"`
	PerAddressBurst int     `yaml:"per_address_burst" default:"400" doc:"how many emulation requests one client address may send at once before 'per_address_rate' applies"`
	// PerSession is the requests per second for one session, on this
	// node, PerSessionBurst how many at once.
	PerSession      float64 `yaml:"per_session_rate" default:"20" doc:"emulation requests per second for one session, on each node; over it, '429'. A negative rate turns the limit off"`
	PerSessionBurst int     `yaml:"per_session_burst" default:"50" doc:"how many emulation requests one session may send at once before 'per_session_rate' applies"`
}

// Defaults of EmulationLimits. A browser's client sends one request per
// batch of commands, a few per second at most; an address may stand for
// many clients behind one NAT.
const (
	DefaultEmulationPerAddress      = 200
	DefaultEmulationPerAddressBurst = 400
	DefaultEmulationPerSession      = 20
	DefaultEmulationPerSessionBurst = 50
	// emulationLimiterKeys bounds the addresses and sessions each limiter
	// remembers (about 200 bytes each).
	emulationLimiterKeys = 65536
)

func (l EmulationLimits) withDefaults() EmulationLimits {
	if l.PerAddress == 0 {
		l.PerAddress = DefaultEmulationPerAddress
	}
	if l.PerAddressBurst <= 0 {
		l.PerAddressBurst = DefaultEmulationPerAddressBurst
	}
	if l.PerSession == 0 {
		l.PerSession = DefaultEmulationPerSession
	}
	if l.PerSessionBurst <= 0 {
		l.PerSessionBurst = DefaultEmulationPerSessionBurst
	}
	return l
}

// emulationGate holds the emulation endpoint's rate limits.
type emulationGate struct {
	perAddr    *keyedlimit.Limiter[string]
	perSession *keyedlimit.Limiter[string]
}

func newEmulationGate(l EmulationLimits) emulationGate {
	l = l.withDefaults()
	return emulationGate{
		perAddr:    keyedlimit.New[string](l.PerAddress, l.PerAddressBurst, emulationLimiterKeys),
		perSession: keyedlimit.New[string](l.PerSession, l.PerSessionBurst, emulationLimiterKeys),
	}
}

// EmulationRequest carries commands for an emulated session: Data is a
// frame of commands in the session's protocol, as the client sent it.
// Addr is the client's address, for the per-address rate limit (empty:
// not limited by address).
type EmulationRequest struct {
	Node    string
	Session string
	Data    []byte
	Addr    string
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
// goes to its node, which must be alive and must have made the session,
// and nil means it was sent, not that the session is still open there. A
// malformed frame closes the session's connection as it would on the
// connection itself.
func (h *Hub) HandleEmulation(ctx context.Context, req EmulationRequest) error {
	now := time.Now()
	if req.Addr != "" && !h.emulation.perAddr.Allow(req.Addr, now) {
		return ErrEmulationRateLimited
	}
	node := req.Node
	if node == "" {
		node = h.nodeID
	}
	key := h.sessionKey
	if node != h.nodeID {
		var alive bool
		if key, alive = h.nodes.SessionKey(node); !alive {
			return fmt.Errorf("%w: %q", ErrUnknownNode, req.Node)
		}
	}
	if !validSession(key, node, req.Session) {
		return ErrUnknownSession
	}
	if !h.emulation.perSession.Allow(req.Session, now) {
		return ErrEmulationRateLimited
	}
	if node == h.nodeID {
		return h.emulateLocal(req.Session, req.Data)
	}
	if len(req.Data) > MaxForwardedEmulation {
		return fmt.Errorf("%w: %d bytes of commands, at most %d go to another node", ErrEmulationTooLarge, len(req.Data), MaxForwardedEmulation)
	}
	return h.sendControlTo(ctx, controlMessage{Emulation: &controlEmulation{
		Node: node, Session: req.Session, Data: req.Data,
	}}, node)
}

// emulateLocal hands commands to a session of this node.
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
