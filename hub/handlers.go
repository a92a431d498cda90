package hub

import (
	"context"
	"errors"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// Handlers let an application that embeds the hub take part in every
// decision the protocol leaves to the server. Every handler is optional;
// without one the hub decides as the reference server does (tokens and
// namespace options).
//
// Where handlers run: a client's commands execute one after another on a
// goroutine of that client's own, started when a frame of commands arrives
// and gone when they are done, never on the transport's shared read workers.
// A handler that blocks (a database query, an HTTP call to a backend) holds
// up only that client's later commands, never another client, pings or
// writes. ctx is cancelled when the client goes away and when
// ClientConfig.CommandTimeout passes; a command whose handler runs out of
// time is answered with error 100 (internal) and the client stays connected.
//
// A handler answers a command with a protocol error by returning an *Error
// (codes 400–1999 are the application's own), or closes the connection by
// returning a *Disconnect. Any other error answers error 100 and is logged.
//
// Every deciding handler (all but OnConnect, OnDisconnect and
// OnBackpressure) may return ErrUseDefault (OnRPC: reply with it) to let
// the hub decide that one command as it would without the handler (a
// proxy configured for some namespaces only, say). Chain composes several
// sets of handlers on that rule.
type Handlers struct {
	// OnConnecting authenticates a connect command. When set, it decides
	// instead of the token check: it may verify ev.Token itself, or use
	// anything else it knows.
	OnConnecting func(ctx context.Context, ev ConnectEvent) (ConnectReply, error)
	// OnConnect is told when a client has connected: its connect reply is
	// queued. It runs on the client's command goroutine.
	OnConnect func(c *Client)
	// OnRefresh decides a refresh command (a client renewing an expiring
	// connection). When set, it replaces the connection token check.
	OnRefresh func(ctx context.Context, c *Client, ev RefreshEvent) (RefreshReply, error)
	// OnSubscribe decides a subscribe command. When set, it replaces the
	// subscription token and namespace permission checks; the channel must
	// still be valid (length, known namespace, channel_regex).
	OnSubscribe func(ctx context.Context, c *Client, ev SubscribeEvent) (SubscribeReply, error)
	// OnSubRefresh decides a sub_refresh command (a client renewing an
	// expiring subscription). When set, it replaces the subscription token
	// check.
	OnSubRefresh func(ctx context.Context, c *Client, ev SubRefreshEvent) (SubRefreshReply, error)
	// OnPublish decides a publish command. When set, it replaces the
	// namespace publish permission; it may reject the publication, or
	// rewrite its data.
	OnPublish func(ctx context.Context, c *Client, ev PublishEvent) (PublishReply, error)
	// OnMapPublish decides a map publish or remove command (ev.Removed).
	// When set, it replaces the namespace's map publish and remove
	// permissions and its client_key; it may reject the change, or replace
	// its key or data.
	OnMapPublish func(ctx context.Context, c *Client, ev MapPublishEvent) (MapPublishReply, error)
	// OnRPC answers rpc commands. It may call reply before it returns or
	// later from any goroutine (hand the call to a worker pool, say); the
	// client's next command waits for the reply, so replies stay in order.
	// reply must be called exactly once; a reply after the command timed
	// out is dropped. Without OnRPC, rpc answers 108 (not available), as
	// the reference server does.
	OnRPC func(ctx context.Context, c *Client, ev RPCEvent, reply func(RPCReply, error))
	// OnPresence decides presence and presence_stats commands. When set,
	// it replaces the namespace presence permission; presence must still be
	// on in the namespace.
	OnPresence func(ctx context.Context, c *Client, ev PresenceEvent) error
	// OnHistory decides history commands. When set, it replaces the
	// namespace history permission; history must still be on in the
	// namespace.
	OnHistory func(ctx context.Context, c *Client, ev HistoryEvent) error
	// OnSend receives send commands (asynchronous messages without a
	// reply). Without it, a send closes the connection with 3508. A
	// returned *Disconnect closes the connection; other errors are logged.
	OnSend func(ctx context.Context, c *Client, ev SendEvent) error
	// OnDisconnect is told when a connected client goes away.
	OnDisconnect func(c *Client, ev DisconnectEvent)
	// OnSharedPollRefresh answers the polls of shared poll channels
	// (sharedpoll.go): the current data of the keys tracked on this node.
	// It runs on the channel's poller, not a client's goroutine.
	OnSharedPollRefresh func(ctx context.Context, ev SharedPollRefreshEvent) (SharedPollRefreshReply, error)
	// OnBackpressure is told when a client's write queue goes over
	// ClientConfig.QueueMaxSize, with what the hub did about it (closed
	// the client, or dropped queued publications). It runs on a goroutine
	// of its own.
	OnBackpressure func(c *Client, ev BackpressureEvent)
	// OnChannelState receives channel state events (occupied, vacated) of
	// the namespaces with StateEvents, at most one node of the cluster at
	// a time, in order per channel (channelstate.go). An error hands the
	// same events over again later, so it may see an event twice: an
	// event's (Channel, TimeMs) names it.
	OnChannelState func(ctx context.Context, events []ChannelStateEvent) error
}

// ErrUseDefault, returned by a deciding handler, makes the hub decide the
// command as it does when that handler is not set: tokens and namespace
// options, error 108 for rpc, 3508 for send. In a Chain it passes the
// command on to the next handler first.
var ErrUseDefault = errors.New("hub: use the default decision")

// ConnectEvent is a client's connect command.
type ConnectEvent struct {
	ClientID   string
	RemoteAddr string
	Token      string
	Data       []byte
	Name       string
	Version    string
	// Headers are the headers the client sent inside its connect request
	// (protocol v2 header emulation).
	Headers map[string]string
	// Transport is the transport's name (TransportWebSocket, ...) and
	// Protocol the connection's encoding.
	Transport string
	Protocol  protocol.Type
	// Header is the header of the HTTP request that opened the
	// connection, nil when there was none.
	Header map[string][]string
}

// ConnectReply is the application's verdict on a connect command.
type ConnectReply struct {
	// User is the authenticated user; empty means anonymous.
	User string
	// ExpireAt is when the connection expires, in Unix seconds; 0 never.
	ExpireAt int64
	// Info is attached to the client's presence and publications.
	Info []byte
	// Channels are server-side subscriptions made for the client.
	Channels []string
	// Data is returned to the client in the connect reply.
	Data []byte
	// Meta is the application's data about the connection: kept with
	// the client (Client.Meta) for later handlers, never sent to it.
	Meta []byte
	// Subs are server-side subscriptions with per-channel options, as a
	// connection token's subs claim gives them.
	Subs map[string]auth.SubOptions
	// ServerSideRefresh makes the hub renew the connection itself when it
	// expires, by calling OnRefresh (RefreshEvent.ServerSide), instead of
	// telling the client to refresh with a new token: the connect reply
	// then carries no expiry. Without OnRefresh, or when it fails until
	// ClientConfig.ExpiredCloseDelay has passed, the connection is closed
	// with 3005 (expired). Centrifugo refreshes connections its connect
	// proxy authenticated this way.
	ServerSideRefresh bool
	// Caps are the connection's channel capabilities (auth.CompileCaps):
	// operations allowed on matching channels besides what their
	// namespaces allow, as a connection token's caps claim gives them.
	Caps *auth.Caps
}

// RefreshEvent is a client's refresh command.
type RefreshEvent struct {
	Token string
	// ServerSide is set when the hub itself renews an expiring connection
	// (ConnectReply.ServerSideRefresh) rather than the client asking.
	ServerSide bool
}

// RefreshReply is the application's verdict on a refresh.
type RefreshReply struct {
	// Expired closes the connection with 3005 (expired).
	Expired bool
	// ExpireAt is the connection's new expiry, in Unix seconds; 0 never.
	ExpireAt int64
	// Info, when not nil, replaces the connection's info.
	Info []byte
	// Caps, when not nil, replaces the connection's capabilities; the
	// client is unsubscribed (2000) from the channels it subscribed to
	// through a capability the new ones no longer grant.
	Caps *auth.Caps
	// setCaps replaces the caps even with none (a refresh token's).
	setCaps bool
	// allow, when not nil, replaces a subscription's allow.
	allow *auth.Ops
}

// SubscribeEvent is a client's subscribe command.
type SubscribeEvent struct {
	Channel string
	// Token is the subscription token the client sent, if any; the
	// handler may verify it itself.
	Token string
	Data  []byte
}

// SubscribeReply is the application's verdict on a subscribe command.
type SubscribeReply struct {
	// Info becomes the subscription's chan_info, seen in presence, join
	// and leave, and publications from this client.
	Info []byte
	// Data is returned to the client in the subscribe result.
	Data []byte
	// ExpireAt is when the subscription expires, in Unix seconds; 0 never.
	ExpireAt int64
	// Override changes the namespace's presence, join/leave, positioning
	// and recovery options for this subscription.
	Override *auth.SubOverride
	// Allow is what the subscription may do besides receive (publish,
	// history, presence), beyond what the namespace allows, as a
	// subscription token's allow claim gives it.
	Allow auth.Ops
	// ServerSideRefresh makes the hub renew the subscription itself when
	// it expires, by calling OnSubRefresh (SubRefreshEvent.ServerSide),
	// instead of telling the client to refresh with a new token: the
	// subscribe result then carries no expiry. Without OnSubRefresh, or
	// when it says expired, the client is unsubscribed with 2501.
	ServerSideRefresh bool
	// Stream, when set, makes the subscription a stream of its own (the
	// subscribe-stream proxy): it is not subscribed through the engine, so
	// no publication to the channel reaches it and it has no position,
	// history or recovery; instead the hub runs Stream once the subscribe
	// reply is queued, and what it delivers goes to this client only
	// (subscription_stream.go).
	Stream StreamFunc
	// StreamPublish, with Stream, makes the stream bidirectional: the
	// client's publications to the channel while subscribed go to it
	// instead of the engine (and are allowed: the application's stream
	// decides what to do with them). Its error is the publish command's.
	// The hub calls it from the client's command goroutine, one call at a
	// time.
	StreamPublish func(ctx context.Context, data []byte) error
}

// SubRefreshEvent is a client's sub_refresh command.
type SubRefreshEvent struct {
	Channel string
	Token   string
	// ServerSide is set when the hub itself renews an expiring
	// subscription (SubscribeReply.ServerSideRefresh).
	ServerSide bool
}

// SubRefreshReply is the application's verdict on a sub_refresh.
type SubRefreshReply struct {
	// Expired unsubscribes the client with 2501 (expired).
	Expired bool
	// ExpireAt is the subscription's new expiry, in Unix seconds; 0 never.
	ExpireAt int64
	// Info, when not nil, replaces the subscription's chan_info.
	Info []byte
	// Allow, when not nil, replaces the subscription's allow.
	Allow *auth.Ops
}

// PublishEvent is a client's publish command.
type PublishEvent struct {
	Channel string
	Data    []byte
}

// PublishReply is the application's verdict on a publish command.
type PublishReply struct {
	// Data, when not nil, is published instead of the client's data.
	Data []byte
	// SkipHistory delivers the publication without keeping it in the
	// channel's stream.
	SkipHistory bool
}

// RPCEvent is a client's rpc command.
type RPCEvent struct {
	Method string
	Data   []byte
}

// RPCReply is the answer to an rpc command.
type RPCReply struct {
	Data []byte
}

// PresenceEvent is a client's presence (Stats false) or presence_stats
// (Stats true) command.
type PresenceEvent struct {
	Channel string
	Stats   bool
}

// HistoryEvent is a client's history command.
type HistoryEvent struct {
	Channel string
	// Since is the position to read after; nil reads from the start (or
	// the end, with Reverse).
	Since   *engine.StreamPosition
	Limit   int
	Reverse bool
}

// SendEvent is a client's send command.
type SendEvent struct {
	Data []byte
}

// DisconnectEvent says why a client went away.
type DisconnectEvent struct {
	Code   uint32
	Reason string
}

// BackpressureEvent says that a client fell behind.
type BackpressureEvent struct {
	// QueuedBytes were waiting to be written when the limit was passed;
	// Limit is ClientConfig.QueueMaxSize.
	QueuedBytes int
	Limit       int
	// Dropped is how many queued publications were dropped to make room
	// (QueueDropOldest); 0 when the client was closed with 3008.
	Dropped int
	// Closed reports that the client is being closed with 3008.
	Closed bool
}
