// Package engine is the contract between the hub and the systems that carry
// publications between nodes and keep history and presence: the memory engine
// for one node, and PostgreSQL, Redis and NATS for a cluster.
//
// The hub never knows which engine it talks to. An engine delivers what is
// published on any node to the Handler of every node, allocates stream
// positions (offset and epoch) for channels with history, and stores presence.
// Every engine passes the same conformance suite in package enginetest.
package engine

import (
	"context"
	"errors"
	"time"
)

// ClientInfo describes a connection: its user, its id, the connection's info
// from the token (ConnInfo) and the channel's info from the subscription
// token (ChanInfo). ConnInfo and ChanInfo are opaque bytes.
type ClientInfo struct {
	User     string
	Client   string
	ConnInfo []byte
	ChanInfo []byte
}

// Publication is one message in a channel.
type Publication struct {
	// Offset is the publication's position in the channel's stream; 0 when
	// the channel keeps no history.
	Offset uint64
	Data   []byte
	// Info is the publishing client, nil for publications from the server.
	Info *ClientInfo
	Tags map[string]string
	// Time is when the engine accepted the publication, in Unix milliseconds.
	Time int64
	// ExceptClient is a client id that must not receive this publication
	// live (the hub's publish-except-one-client); empty for none. It
	// travels with live delivery to every node. History need not keep it:
	// publications read from history, by History or by an engine refilling
	// a gap in live delivery, may come without it, depending on the engine.
	ExceptClient string
	// Key and Removed are set on the publications of map channels (see
	// MapBroker): the key the publication sets, or removes when Removed.
	// Engines carry both with live delivery and history.
	Key     string
	Removed bool
	// Delta asks the nodes that deliver the publication to send it as a
	// Fossil delta to the subscribers that negotiated delta, even where
	// the channel's namespace lacks delta_publish (the server API's
	// per-publish delta flag). Like ExceptClient it travels with live
	// delivery to every node, and a node of an older version that does
	// not know it reads the publication without it; history need not
	// keep it.
	Delta bool
}

// StreamPosition names a place in a channel's stream. Epoch changes whenever
// the stream is lost and started again, so that an offset from an older
// stream is never mistaken for one of the current stream.
type StreamPosition struct {
	Offset uint64
	Epoch  string
}

// PublishOptions says how a publication is kept.
type PublishOptions struct {
	// HistorySize and HistoryTTL keep the publication in the channel's
	// stream; both must be positive, otherwise the publication is delivered
	// and forgotten (and gets offset 0).
	HistorySize int
	HistoryTTL  time.Duration
	// HistoryMetaTTL is how long the stream's top offset and epoch outlive
	// the stream's last publication; zero means the engine's default.
	HistoryMetaTTL time.Duration
	// IdempotencyKey, when not empty, makes the publication idempotent per
	// channel: a publication with the same key to the same channel within
	// IdempotentResultTTL of the first is not delivered or stored again,
	// and Publish returns the first one's position. Engines that keep no
	// state between nodes return ErrIdempotencyUnsupported.
	IdempotencyKey string
	// IdempotentResultTTL is how long a key is remembered; it must be
	// positive when IdempotencyKey is set.
	IdempotentResultTTL time.Duration
}

// ErrIdempotencyUnsupported is returned by Publish with an idempotency key
// from engines that cannot remember keys across the cluster.
var ErrIdempotencyUnsupported = errors.New("idempotent publishing is not supported by this engine")

// ErrIdempotencyFull is returned by Publish with a new idempotency key
// when the engine already remembers as many keys within their window as
// it may hold: it refuses the publication rather than forget a key early
// (which would let a retry deliver twice). Retrying later may succeed.
var ErrIdempotencyFull = errors.New("too many idempotency keys remembered")

// HasHistory reports whether publications with these options are kept.
func (o PublishOptions) HasHistory() bool { return o.HistorySize > 0 && o.HistoryTTL > 0 }

// HistoryRequest selects publications from a channel's stream.
type HistoryRequest struct {
	// Since is exclusive: forward reads return offsets above Since.Offset,
	// reverse reads offsets below it. Nil starts at the oldest publication
	// (the newest when Reverse). Since.Epoch is not checked by the engine;
	// the caller compares it with the returned position.
	Since *StreamPosition
	// Limit: 0 returns the position only, -1 every publication, N at most N.
	Limit   int
	Reverse bool
	// MetaTTL is how long the stream's position is kept (see PublishOptions).
	MetaTTL time.Duration
}

// PresenceStats counts a channel's presence.
type PresenceStats struct {
	NumClients int
	NumUsers   int
}

// ErrClosed is returned by an engine that has been closed.
var ErrClosed = errors.New("engine closed")

// Handler receives what any node published. The engine calls it from its
// own goroutines, possibly while holding the channel's lock: an
// implementation must not block for long (a slow handler delays delivery
// to every channel) and must not call the engine's Publish methods
// synchronously. Publications and ClientInfos handed to it are shared and
// read-only.
type Handler interface {
	// HandlePublication delivers a publication with the stream position it
	// was given (Offset 0 and an empty Epoch for channels without history).
	// For any one channel, publications arrive in offset order.
	HandlePublication(channel string, pub *Publication, sp StreamPosition)
	HandleJoin(channel string, info *ClientInfo)
	HandleLeave(channel string, info *ClientInfo)
	// HandleControl delivers a control message that a node sent to all
	// nodes or to this one (see Broker.PublishControl).
	HandleControl(data []byte)
}

// Broker carries publications, join/leave events and control messages
// between nodes, and keeps channel history.
type Broker interface {
	// Start connects the broker and begins delivering to h. It returns
	// when the broker is ready to publish and deliver.
	Start(ctx context.Context, h Handler) error
	// Publish delivers pub to every node subscribed to channel and, when
	// opts.HasHistory(), appends it to the channel's stream and returns its
	// position. pub.Offset is ignored; the engine keeps its own copy, so the
	// caller may reuse pub afterwards. It returns once the engine has
	// accepted the publication: stored, for engines with history; buffered
	// on the connection, for delivery-only engines such as NATS. Either way,
	// publications from one caller to one channel are delivered in the
	// order their Publish calls returned.
	Publish(ctx context.Context, channel string, pub *Publication, opts PublishOptions) (StreamPosition, error)
	PublishJoin(ctx context.Context, channel string, info *ClientInfo) error
	PublishLeave(ctx context.Context, channel string, info *ClientInfo) error
	// PublishControl sends data to the node whose NodeID is node, or to
	// every node, this one included, when node is empty. A message to a
	// node that is not running is dropped, as on any network: the sender
	// learns of a node's liveness from the cluster's heartbeats, not from
	// here. Messages from one caller to one node arrive in the order their
	// calls returned; targeted and broadcast messages are not ordered with
	// each other.
	PublishControl(ctx context.Context, data []byte, node string) error
	// NodeID is the id this node is addressed by in PublishControl, and
	// the one it has in the engine's own records (presence rows, node
	// registries, connection names): unique in the cluster, fixed for the
	// engine's lifetime. The hub takes it as the node's only identity.
	NodeID() string
	// Subscribe declares that this node has subscribers on channel, and
	// Unsubscribe that it has none left. Subscribe returns only once
	// publications to channel will reach the handler, so that a history
	// read after it misses nothing. Brokers that deliver everything to
	// every node may ignore both.
	Subscribe(ctx context.Context, channel string) error
	Unsubscribe(ctx context.Context, channel string) error
	// History reads a channel's stream and returns its current top position.
	// Reading a channel that has no stream yet creates its position (offset
	// 0 and a new epoch), so the epoch seen before the first publication is
	// the one that publication gets. Returned publications are read-only.
	History(ctx context.Context, channel string, req HistoryRequest) ([]*Publication, StreamPosition, error)
	// RemoveHistory drops a stream's publications but keeps its position.
	RemoveHistory(ctx context.Context, channel string) error
	// Close stops delivery and releases the broker's connections; it waits
	// for deliveries in progress. Later calls return ErrClosed.
	Close() error
}

// PresenceManager keeps who is in a channel. NumUsers counts distinct user
// ids, all anonymous clients together as one. Entries expire after ttl unless
// added again: a node refreshes its clients' entries well within ttl, so the
// entries of a node that died go away on their own.
type PresenceManager interface {
	AddPresence(ctx context.Context, channel string, info *ClientInfo, ttl time.Duration) error
	RemovePresence(ctx context.Context, channel string, clientID string) error
	// Presence maps client id to ClientInfo.
	Presence(ctx context.Context, channel string) (map[string]*ClientInfo, error)
	PresenceStats(ctx context.Context, channel string) (PresenceStats, error)
}

// NodeForgetter is implemented by engines that keep records owned by a
// node (the PostgreSQL engine's presence rows, which name their node). The
// hub owns the cluster's liveness (its heartbeats); when a node leaves or
// stops sending heartbeats, every live node's hub calls ForgetNode, so what
// the dead node owned goes at once instead of at its TTL. It must be
// idempotent and must not touch a live node's records.
type NodeForgetter interface {
	ForgetNode(ctx context.Context, node string) error
}

// Engine is what a hub needs: a broker and a presence manager. An engine
// package may provide both from one value, or a deployment may pair a
// broker with another system's presence.
type Engine interface {
	Broker
	PresenceManager
}
