package hub

import (
	"time"
)

// NamespaceOptions are the options of a channel namespace. The zero value
// allows nothing: clients can subscribe only with a subscription token, and
// channels keep no history and no presence.
type NamespaceOptions struct {
	// Presence keeps who is subscribed, readable with presence and
	// presence_stats.
	Presence bool
	// JoinLeave publishes join and leave events. Subscribers receive them
	// when they ask (join_leave in the subscribe request) and may read
	// presence, or always with ForcePushJoinLeave.
	JoinLeave          bool
	ForcePushJoinLeave bool

	// HistorySize and HistoryTTL keep a stream of the channel's latest
	// publications; both must be positive.
	HistorySize int
	HistoryTTL  time.Duration
	// HistoryMetaTTL is how long the stream's position outlives its last
	// publication; zero means the engine's default (30 days).
	HistoryMetaTTL time.Duration

	ForcePositioning bool
	AllowPositioning bool
	ForceRecovery    bool
	AllowRecovery    bool

	AllowSubscribeForClient    bool
	AllowSubscribeForAnonymous bool
	AllowPublishForSubscriber  bool
	AllowPublishForClient      bool
	AllowPublishForAnonymous   bool
	AllowHistoryForSubscriber  bool
	AllowHistoryForClient      bool
	AllowHistoryForAnonymous   bool
	AllowPresenceForSubscriber bool
	AllowPresenceForClient     bool
	AllowPresenceForAnonymous  bool

	// AllowUserLimitedChannels lets a user subscribe to a channel whose name
	// ends with #user1,user2 without a token when the user is listed.
	AllowUserLimitedChannels bool
	// ChannelRegex, when set, must match the channel name after the
	// namespace prefix.
	ChannelRegex string
	// QueuePolicy says what happens when a subscriber of these channels
	// falls behind, its write queue over ClientConfig.QueueMaxSize:
	// QueueClose (the default) closes it with 3008; QueueDropOldest drops
	// the oldest publications of such channels still waiting in its queue,
	// for ticker-style channels where only the latest value matters.
	QueuePolicy QueuePolicy
	// JoinLeaveMaxSubscribers bounds join/leave pushes: in a channel with
	// more subscribers than this on a node, that node neither emits nor
	// pushes join and leave events, since each event costs a push to every
	// subscriber and a crowd joining at once would cost the square of its
	// size. Presence is kept whatever the size. 0 means
	// DefaultJoinLeaveMaxSubscribers; -1 means no bound.
	JoinLeaveMaxSubscribers int
	// PublicationDataFormat is what publications in these channels carry
	// (DataFormatJSON by default): publish refuses data of another format,
	// from clients and the server API alike, so that no publication can
	// reach a subscriber that cannot decode it.
	PublicationDataFormat DataFormat
	// AllowedDeltaTypes lists the delta encodings subscribers may ask for
	// (SubscribeRequest.delta); only DeltaFossil exists. A subscriber that
	// negotiated one receives each publication as a delta against the
	// previous one it received, when that is smaller.
	AllowedDeltaTypes []string
}

// DefaultJoinLeaveMaxSubscribers is NamespaceOptions.JoinLeaveMaxSubscribers
// when it is 0.
const DefaultJoinLeaveMaxSubscribers = 1000

// joinLeaveAllowed reports whether a channel with n local subscribers
// still emits and pushes join and leave events.
func (o NamespaceOptions) joinLeaveAllowed(n int) bool {
	switch max := o.JoinLeaveMaxSubscribers; {
	case max < 0:
		return true
	case max == 0:
		return n <= DefaultJoinLeaveMaxSubscribers
	default:
		return n <= max
	}
}

// QueuePolicy is what the hub does with a subscriber whose write queue is
// over its limit.
type QueuePolicy string

// Queue policies.
const (
	// QueueClose closes the slow client with 3008 (the default).
	QueueClose QueuePolicy = "close"
	// QueueDropOldest drops the oldest queued publications of the
	// channel's namespace to make room, counted in metrics; the client
	// stays connected.
	QueueDropOldest QueuePolicy = "drop_oldest"
)

// HasHistory reports whether the namespace keeps a history stream.
func (o NamespaceOptions) HasHistory() bool {
	return o.HistorySize > 0 && o.HistoryTTL > 0
}

// Namespace is a named set of channels, the prefix before ':' in a channel
// name, with its options.
type Namespace struct {
	Name string
	NamespaceOptions
}

// ChannelConfig describes every channel the hub serves.
type ChannelConfig struct {
	// MaxLength bounds channel names, in bytes. Default 255.
	MaxLength int
	// WithoutNamespace applies to channels with no ':' in their name.
	WithoutNamespace NamespaceOptions
	Namespaces       []Namespace
}

// ClientConfig sets limits and timings of client connections. Zero values
// take the defaults named on each field.
type ClientConfig struct {
	// PingInterval is how often the server pings (25s); PongTimeout how
	// long it waits for the pong before closing with 3012 (8s).
	PingInterval time.Duration
	PongTimeout  time.Duration
	// StaleCloseDelay closes a connection that sent no connect command (10s).
	StaleCloseDelay time.Duration
	// ExpiredCloseDelay is how long an expired connection may still
	// refresh before it is closed with 3005 (25s).
	ExpiredCloseDelay time.Duration
	// ExpiredSubCloseDelay is the same for subscriptions (25s); an expired
	// subscription is unsubscribed with 2501.
	ExpiredSubCloseDelay time.Duration
	// ChannelLimit bounds the subscriptions of one connection (128).
	ChannelLimit int
	// QueueMaxSize bounds the bytes waiting to be written to one
	// connection; a client that falls further behind is closed with 3008
	// (1 MiB).
	QueueMaxSize int
	// WriteCoalesce, when above zero, writes to one connection at most
	// once per this interval: messages that arrive sooner after a write
	// wait and go out together in one frame (coalesce.go). It trades up to
	// this much latency, only for connections that receive faster than one
	// message per interval, for fewer write system calls. Off (0) by
	// default.
	WriteCoalesce time.Duration
	// RecoveryMaxPublicationLimit caps how many publications a recovery
	// may return; a longer gap is not recovered (300).
	RecoveryMaxPublicationLimit int
	// HistoryMaxPublicationLimit caps the history command's limit (300).
	HistoryMaxPublicationLimit int
	// ConnectionLimit bounds the connected clients of this node; more are
	// refused with 3504 (0: no limit).
	ConnectionLimit int
	// UserConnectionLimit bounds one user's connections on this node; more
	// are refused with 3504 (0: no limit). Anonymous clients are not counted.
	UserConnectionLimit int
	// CommandRateLimit is how many commands per second one connection may
	// send on average, with bursts of CommandRateBurst (0: no limit). A
	// command over the limit gets error 111; a client that keeps going
	// (CommandRateBurst more) is closed with 3013.
	CommandRateLimit float64
	CommandRateBurst int
	// PresenceTTL is how long a presence entry lives unless refreshed; the
	// hub refreshes its clients' entries every PresenceTTL/3 (60s).
	PresenceTTL time.Duration
	// CommandTimeout bounds one command's engine calls and handlers (10s).
	// A command that runs out of time answers error 100 (internal) and the
	// client stays connected; the command's context is also cancelled when
	// the client goes away.
	CommandTimeout time.Duration

	// AllowAnonymousConnectWithoutToken accepts a connect command that
	// carries no token, as an anonymous user.
	AllowAnonymousConnectWithoutToken bool
	// DisallowAnonymousConnectionTokens refuses tokens with an empty sub
	// claim (3507).
	DisallowAnonymousConnectionTokens bool
	// Insecure accepts every connection and allows every channel
	// operation. For development only; the server logs a warning.
	Insecure bool
}

func (c ClientConfig) withDefaults() ClientConfig {
	setDur := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	setInt := func(n *int, def int) {
		if *n <= 0 {
			*n = def
		}
	}
	setDur(&c.PingInterval, 25*time.Second)
	setDur(&c.PongTimeout, 8*time.Second)
	setDur(&c.StaleCloseDelay, 10*time.Second)
	setDur(&c.ExpiredCloseDelay, 25*time.Second)
	setDur(&c.ExpiredSubCloseDelay, 25*time.Second)
	setDur(&c.PresenceTTL, 60*time.Second)
	setDur(&c.CommandTimeout, 10*time.Second)
	setInt(&c.ChannelLimit, 128)
	setInt(&c.QueueMaxSize, 1<<20)
	setInt(&c.RecoveryMaxPublicationLimit, 300)
	setInt(&c.HistoryMaxPublicationLimit, 300)
	if c.CommandRateLimit > 0 && c.CommandRateBurst <= 0 {
		c.CommandRateBurst = max(int(c.CommandRateLimit), 1)
	}
	return c
}
