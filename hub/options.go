package hub

import (
	"fmt"
	"math"
	"time"
)

// The struct tags of the option types are their definition as
// configuration: yaml is the key, default the value a configuration file
// starts from and doc the line that documents it (package config reads
// them; the hub itself applies the defaults its fields name for zero).

// NamespaceOptions are the options of a channel namespace. The zero value
// allows nothing: clients can subscribe only with a subscription token, and
// channels keep no history and no presence.
type NamespaceOptions struct {
	// Presence keeps who is subscribed, readable with presence and
	// presence_stats.
	Presence bool `yaml:"presence" doc:"keep who is subscribed; readable with presence and presence_stats"`
	// JoinLeave publishes join and leave events. Subscribers receive them
	// when they ask (join_leave in the subscribe request) and may read
	// presence, or always with ForcePushJoinLeave.
	JoinLeave          bool `yaml:"join_leave" doc:"publish join and leave events"`
	ForcePushJoinLeave bool `yaml:"force_push_join_leave" doc:"send join/leave to every subscriber (otherwise only to those that ask and may read presence)"`

	// HistorySize and HistoryTTL keep a stream of the channel's latest
	// publications; both must be positive.
	HistorySize int           `yaml:"history_size" doc:"how many publications the channel's stream keeps; needs 'history_ttl'"`
	HistoryTTL  time.Duration `yaml:"history_ttl" doc:"how long the stream keeps publications after the last one; needs 'history_size'"`
	// HistoryMetaTTL is how long the stream's position outlives its last
	// publication; zero means the engine's default (30 days).
	HistoryMetaTTL time.Duration `yaml:"history_meta_ttl" doc:"how long the stream's position (offset, epoch) outlives its last publication (0: the engine default, 30 days)"`

	ForcePositioning bool `yaml:"force_positioning" doc:"every subscription gets the stream position and gap detection"`
	AllowPositioning bool `yaml:"allow_positioning" doc:"clients may ask for positioning"`
	ForceRecovery    bool `yaml:"force_recovery" doc:"every subscription is recoverable: on resubscribe the client gets what it missed (needs history)"`
	AllowRecovery    bool `yaml:"allow_recovery" doc:"clients may ask for recovery (needs history)"`
	// ForceRecoveryMode is how subscriptions recover (subscription_cacherecovery.go):
	// RecoveryStream replays what the client missed; RecoveryCache gives
	// only the latest publication.
	ForceRecoveryMode RecoveryMode `yaml:"force_recovery_mode" default:"stream" doc:"how subscribers recover: 'stream' replays the publications they missed; 'cache' gives only the channel's latest publication, for channels whose every publication is the whole state (prices, statuses); with 'history_size: 1' it makes the channel a latest-value store. See [protocol.md](protocol.md#cache-recovery)"`
	// AutoCacheRecover gives the latest publication on every subscribe,
	// without the client asking for recovery, server-side subscriptions
	// (and so unidirectional clients) included.
	AutoCacheRecover bool `yaml:"auto_cache_recover" doc:"with 'force_recovery' and 'force_recovery_mode: cache': every subscription, server-side ones and unidirectional clients' included, gets the latest publication on (re)subscribe without asking for recovery"`

	AllowSubscribeForClient    bool `yaml:"allow_subscribe_for_client" doc:"authenticated clients may subscribe without a token"`
	AllowSubscribeForAnonymous bool `yaml:"allow_subscribe_for_anonymous" doc:"so may anonymous ones (together with the option above)"`
	AllowPublishForSubscriber  bool `yaml:"allow_publish_for_subscriber" doc:"subscribers may publish"`
	AllowPublishForClient      bool `yaml:"allow_publish_for_client" doc:"any authenticated client may publish"`
	AllowPublishForAnonymous   bool `yaml:"allow_publish_for_anonymous" doc:"anonymous clients may publish (together with one of the two above)"`
	AllowHistoryForSubscriber  bool `yaml:"allow_history_for_subscriber" doc:"subscribers may read history"`
	AllowHistoryForClient      bool `yaml:"allow_history_for_client" doc:"any authenticated client may read history"`
	AllowHistoryForAnonymous   bool `yaml:"allow_history_for_anonymous" doc:"anonymous clients may read history (together with one of the two above)"`
	AllowPresenceForSubscriber bool `yaml:"allow_presence_for_subscriber" doc:"subscribers may read presence"`
	AllowPresenceForClient     bool `yaml:"allow_presence_for_client" doc:"any authenticated client may read presence"`
	AllowPresenceForAnonymous  bool `yaml:"allow_presence_for_anonymous" doc:"anonymous clients may read presence (together with one of the two above)"`

	// AllowUserLimitedChannels lets a user subscribe to a channel whose name
	// ends with #user1,user2 without a token when the user is listed.
	AllowUserLimitedChannels bool `yaml:"allow_user_limited_channels" doc:"'name#u1,u2' channels admit the listed users"`
	// SubscribeCEL, PublishCEL, HistoryCEL and PresenceCEL are CEL
	// expressions that allow what the grants above do not
	// (channelcel.go).
	SubscribeCEL string `yaml:"subscribe_cel" doc:"a CEL expression that allows a subscribe the options above refuse, as Centrifugo PRO's: 'vars.name == user', \"'admin' in meta.roles\". Its variables: 'user' (string), 'meta' (the connection's meta, a JSON object), 'channel' (string), 'vars' (the channel pattern's variables, a map of strings) and 'subscribed' (bool). An expression that fails (a missing key) refuses"`
	PublishCEL   string `yaml:"publish_cel" doc:"as 'subscribe_cel', for publish"`
	HistoryCEL   string `yaml:"history_cel" doc:"as 'subscribe_cel', for history"`
	PresenceCEL  string `yaml:"presence_cel" doc:"as 'subscribe_cel', for presence and presence_stats"`
	// ChannelRegex, when set, must match the channel name after the
	// namespace prefix.
	ChannelRegex string `yaml:"channel_regex" doc:"the part after 'ns:' must match this regular expression (otherwise error 107)"`
	// QueuePolicy says what happens when a subscriber of these channels
	// falls behind, its write queue over ClientConfig.QueueMaxSize:
	// QueueClose (the default) closes it with 3008; QueueDropOldest drops
	// the oldest publications of such channels still waiting in its queue,
	// for ticker-style channels where only the latest value matters.
	QueuePolicy QueuePolicy `yaml:"queue_policy" default:"close" doc:"what happens to a subscriber that falls behind (its write queue over 'client.queue_max_size'): 'close' closes it with 3008; 'drop_oldest' drops the oldest publications of this namespace's channels still waiting in its queue and keeps it connected, for ticker-style channels where only the latest value matters"`
	// JoinLeaveMaxSubscribers bounds join/leave pushes: in a channel with
	// more subscribers than this on a node, that node neither emits nor
	// pushes join and leave events, since each event costs a push to every
	// subscriber and a crowd joining at once would cost the square of its
	// size. Presence is kept whatever the size. 0 means
	// DefaultJoinLeaveMaxSubscribers; -1 means no bound.
	JoinLeaveMaxSubscribers int `yaml:"join_leave_max_subscribers" doc:"join and leave events stop in a channel with more subscribers than this on a node (0 means 1000; -1 means no bound): each event is a push to every subscriber, so a crowd joining at once would cost the square of its size and starve the node. Presence is kept whatever the size. Counted per node; 'herald_channel_join_leave_suppressed_total' counts the events not sent"`
	// AllowChannelCompaction lets subscribers that ask for it receive
	// pushes by a numeric channel id instead of the name (compaction.go).
	AllowChannelCompaction bool `yaml:"allow_channel_compaction" doc:"subscribers that ask for channel compaction (centrifuge-js, centrifuge-go and centrifuge-python always do) get a numeric channel id in the subscribe result, and their publication, join and leave pushes carry the id instead of the channel name. Saves the name's bytes in every push; see [protocol.md](protocol.md#channel-compaction)"`
	// AllowTagsFilter lets subscribers give a tags filter
	// (SubscribeRequest.tf) so that only the publications whose tags pass
	// it reach them (hub/internal/tagsfilter).
	AllowTagsFilter bool `yaml:"allow_tags_filter" doc:"subscribers may give a tags filter ('tagsFilter' in centrifuge-js) and then receive only the publications whose tags pass it; elsewhere a filter is refused with error 107. See [protocol.md](protocol.md#tags-filter)"`
	// TagsMaxSize bounds the tags of one publication, keys and values
	// together, in bytes: each subscriber's filter reads them on every
	// publication, so their size multiplies the cost of a channel's
	// filters. 0 means DefaultTagsMaxSize; -1 means no bound.
	TagsMaxSize int `yaml:"tags_max_size" doc:"the tags of one publication to these channels, keys and values together, in bytes (0 means 4096; -1 means no bound): a publish with more is refused with error 107 naming 'tags'. Every subscriber's tags filter reads the tags of every publication, so their size multiplies the cost of a channel's filters"`
	// PublicationDataFormat is what publications in these channels carry
	// (DataFormatAny by default, Centrifugo's empty value): publish
	// refuses data of another format, from clients and the server API
	// alike, so that no publication can reach a subscriber that cannot
	// decode it.
	PublicationDataFormat DataFormat `yaml:"publication_data_format" defaultdoc:"empty: any non-empty data, non-JSON data only while no JSON client of the node subscribes" doc:"what publications in these channels carry, with Centrifugo's values: empty (the default) accepts any non-empty data, but data that is not JSON only while no JSON client of the node that takes the publication is subscribed to the channel (error 107 otherwise); 'json' one JSON value in valid UTF-8; 'json_object' only a JSON object; 'binary' any bytes, empty ones too, and then only Protobuf clients may subscribe (a JSON client gets error 107). Data of another format is refused at publish time with error 107, from clients and the server API alike; see [protocol.md](protocol.md#payloads-json-and-binary)"`
	// AllowedDeltaTypes lists the delta encodings subscribers may ask for
	// (SubscribeRequest.delta); only DeltaFossil exists. A subscriber that
	// negotiated one receives each publication as a delta against the
	// previous one it received, when that is smaller.
	AllowedDeltaTypes []string `yaml:"allowed_delta_types" doc:"delta encodings subscribers of these channels may ask for; only 'fossil' (empty: none). A subscriber that asks 'delta: \"fossil\"' here gets 'delta: true' in its subscribe result, the first publication in full and the next ones as Fossil deltas against the previous one it received, whenever smaller; asking elsewhere is not an error, the subscription just goes without delta. See [protocol.md](protocol.md#delta-compression)"`
	// DeltaPublish sends the publications of these channels as Fossil
	// deltas to the subscribers that negotiated delta (AllowedDeltaTypes);
	// without it they get in full every publication but those published
	// with PublishOptions.Delta or MapChange.Delta, as in Centrifugo, whose
	// delta_publish this is (delivery_delta.go).
	DeltaPublish bool `yaml:"delta_publish" doc:"publications (and map key changes) of these channels go as Fossil deltas against the previous one to the subscribers that negotiated delta ('allowed_delta_types'), whenever smaller; off (the default, as in Centrifugo), such subscribers get every publication in full (over JSON as a JSON string) unless the server API's publish, broadcast or map_publish sets 'delta' for it, and recovered publications go as deltas. See [protocol.md](protocol.md#delta-compression)"`
	// SubscriptionType makes the namespace's channels maps (mapoptions.go)
	// instead of streams; Map configures them.
	SubscriptionType SubscriptionType `yaml:"subscription_type" default:"stream" doc:"what the channels are: 'stream' (publications in order), 'map', 'map_clients' or 'map_users' (keyed state that subscribers read as a snapshot then follow live; see [protocol.md](protocol.md#map-subscriptions)), or 'shared_poll' (subscribers track keys whose data the node polls from a backend; see [protocol.md](protocol.md#shared-poll-subscriptions)). A client must subscribe with the matching type (centrifuge-js 'newMapSubscription' for 'map'), otherwise error 107"`
	Map              MapOptions       `yaml:"map"`
	// StateEvents is Centrifugo PRO's state_proxy_enabled (channelstate.go).
	StateEvents bool `yaml:"state_proxy_enabled" doc:"make channel state events for these channels: 'occupied' when a channel gets its first subscriber on any node, 'vacated' when its last one has been gone from every node for 'channel.state.vacated_event_delay'; they go to the proxy 'channel.state_proxy' (Centrifugo PRO's NotifyChannelState) and to 'channel.state.outputs'. Needs an engine that keeps state: memory, postgres or redis. See [proxy.md](proxy.md#channel-state-events)"`
	// SharedPoll configures the channels of SubscriptionSharedPoll
	// (sharedpoll_options.go).
	SharedPoll SharedPollOptions `yaml:"shared_poll"`
	// ClientPublishDebounceInterval is announced to subscribers, which
	// coalesce their publishes of a key within it (publishdebounce.go).
	ClientPublishDebounceInterval time.Duration `yaml:"client_publish_debounce_interval" doc:"sent to subscribers in the subscribe result ('publish_debounce', in milliseconds; 0: none): centrifuge-js 5.8 then sends a client's first publish of a key at once and the later ones within this interval as one, the latest. Whole milliseconds. Only announced: the server takes every publish it gets"`
	// MapClientsPresenceChannelPrefix and MapUsersPresenceChannelPrefix
	// keep the channel's subscribers as keys of a map_clients or
	// map_users channel named by the prefix and the channel (subscription_mappresence.go).
	MapClientsPresenceChannelPrefix string `yaml:"map_clients_presence_channel_prefix" doc:"each subscriber of a channel here is a key (its connection id, with its info) of the channel named by this prefix and the channel, which must be in a 'map_clients' namespace: presence that subscribers of that channel follow as a map. The key goes when the client leaves; the 'key_ttl' of that namespace must be longer than a third of 'client.presence_ttl' (keys are refreshed that often)"`
	MapUsersPresenceChannelPrefix   string `yaml:"map_users_presence_channel_prefix" doc:"the same per user: the key is the user id (anonymous clients are left out), in a 'map_users' namespace; it expires 'key_ttl' after the user's last connection left"`
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

// DefaultTagsMaxSize is NamespaceOptions.TagsMaxSize when it is 0: tags
// are short labels to filter on, and 1,000 subscribers with the largest
// filters allowed cost a few milliseconds per publication with tags of
// this size (hub/internal/tagsfilter's benchmarks).
const DefaultTagsMaxSize = 4096

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
	Name             string `yaml:"name" defaultdoc:"required" doc:"the namespace's name, the prefix before ':' in its channels' names; it must match '^[-a-zA-Z0-9_.]{2,}$', as in Centrifugo; with 'channel.patterns', a name that starts with '/' is a channel pattern instead ('/users/:name')"`
	NamespaceOptions `yaml:",inline"`
}

// ChannelConfig describes every channel the hub serves.
type ChannelConfig struct {
	// MaxLength bounds channel names, in bytes. Default 255.
	MaxLength int `yaml:"max_length" default:"255" doc:"longest channel name, in bytes (longer gives error 107)"`
	// ChannelSyntax: private_prefix, namespace_boundary, user_boundary
	// and user_separator (channelsyntax.go).
	ChannelSyntax `yaml:",inline"`
	// WithoutNamespace applies to channels with no ':' in their name.
	// (As configuration, package config replaces these two with lists that
	// also hold each namespace's proxies and SQL checks.)
	WithoutNamespace NamespaceOptions `yaml:"without_namespace"`
	Namespaces       []Namespace      `yaml:"namespaces"`
	// State tunes channel state events (channelstate.go).
	State ChannelStateConfig `yaml:"state"`
	// Patterns turns on channel patterns (channelpattern.go).
	Patterns bool `yaml:"patterns" doc:"namespaces whose name starts with '/' are channel patterns, as Centrifugo PRO's: a route over the whole channel name, segments separated by '/', where ':name' at the end of a segment matches the rest of it ('/users/:name' matches '/users/mary'; '/personal/user_:user' matches '/personal/user_mary'). The variables are 'vars' in the namespace's CEL expressions. Static patterns win over ones with variables; two with variables that could match one channel are refused. A channel that starts with '/' and matches no pattern gets error 102"`
}

// ClientConfig sets limits and timings of client connections. Zero values
// take the defaults named on each field.
type ClientConfig struct {
	// PingInterval is how often the server pings (25s); PongTimeout how
	// long it waits for the pong before closing with 3012 (8s).
	PingInterval time.Duration `yaml:"ping_interval" default:"25s" doc:"how often the server pings a client (the client answers with a pong)"`
	PongTimeout  time.Duration `yaml:"pong_timeout" default:"8s" doc:"how long the server waits for a pong before closing with 3012; shorter than 'ping_interval'. A client that is still taking bytes written before the ping (it reads, but is behind) gets the time from when it has caught up, and no new ping is sent while a pong is outstanding"`
	// StaleCloseDelay closes a connection that sent no connect command (10s).
	StaleCloseDelay time.Duration `yaml:"stale_close_delay" default:"10s" doc:"a connection that has not sent connect by then is closed with 3502"`
	// ExpiredCloseDelay is how long an expired connection may still
	// refresh before it is closed with 3005 (25s).
	ExpiredCloseDelay time.Duration `yaml:"expired_close_delay" default:"25s" doc:"how long an expired connection may still refresh its token before it is closed with 3005"`
	// ExpiredSubCloseDelay is the same for subscriptions (25s); an expired
	// subscription is unsubscribed with 2501.
	ExpiredSubCloseDelay time.Duration `yaml:"expired_sub_close_delay" default:"25s" doc:"the same for subscription tokens; an expired subscription gets the unsubscribe push 2501"`
	// ChannelLimit bounds the subscriptions of one connection (128).
	ChannelLimit int `yaml:"channel_limit" default:"128" doc:"subscriptions per connection; more gives error 106"`
	// WaitOnBlockedWrites keeps a pool writer waiting for a client whose
	// socket does not take a frame, as before issue 35 #3. By default the
	// writer leaves that client to a goroutine of its own
	// (delivery_writer.go, frameWriter). That was an option, off, while
	// it closed 3 and 39 of 500 reading subscribers as slow at twice the
	// capacity (bench/overload.sh); with a detached write judged by what
	// its client takes over 2 s, and the pong deadline of a client that
	// is behind run from when it has caught up (lifecycle_pong.go), runs
	// at twice the capacity close none.
	WaitOnBlockedWrites bool `yaml:"wait_on_blocked_writes" doc:"a writer of the node's pool waits for one client's full socket, as before, instead of leaving the client's write to a goroutine of its own (the default: a client that stops reading with a large reply on its way delays no one else); the pool then has 64 writers instead of one per CPU"`
	// QueueMaxSize bounds the bytes waiting to be written to one
	// connection; a client that falls further behind is closed with 3008
	// (1 MiB).
	QueueMaxSize int `yaml:"queue_max_size" default:"1048576" doc:"bytes that may wait to be written to one connection; a client over it that is not reading (a write to it has waited 2s, or three times 'websocket.write_timeout' if longer, and, on Linux, the kernel says it took no bytes for as long; 500ms where the kernel cannot tell, or with 'client.wait_on_blocked_writes') is closed with 3008. A client that reads is not blamed for a node that is behind: it is closed only when it holds more than 4 times this and the node's queues pass twice 'client.node_queue_max_size', or, reading slower than its channels publish, more than 16 times this"`
	// NodeQueueMaxSize bounds the bytes waiting in the write queues of
	// all the node's clients together: past it, publishing on this node
	// (client publish and the server API) is refused with error 111, so a
	// saturated node sheds load at the source instead of closing clients
	// (256 MiB; -1: no bound). Past twice this, clients whose queues are
	// over 4 times QueueMaxSize are closed with 3008 even if they read,
	// which bounds what publications of other nodes, which cannot be shed
	// here, may queue.
	NodeQueueMaxSize int `yaml:"node_queue_max_size" default:"268435456" doc:"bytes that may wait in the write queues of all this node's connections together; past it, publications made on this node (client publish and the server API) are refused with error 111 'too many requests' (temporary: retry later) and counted in 'herald_node_shed_publications_total', until delivery catches up; so are a client's 'history' with a limit, its recovering subscribes and its map subscribe pages (state, stream and the reply that goes live), whose replies may be large, and any such reply (or a connect whose server-side subscriptions recovered publications) that would take the queues past half this bound (the rest is kept for publications), its bytes counted once read and before it is queued ('herald_node_shed_replies_total'; a refused connect closes with 3013). Past twice this (publications from other nodes cannot be shed here), clients holding more than 4 times 'client.queue_max_size' are closed with 3008 even if they read. -1: no bound, nothing shed, and clients that read are never closed"`
	// WriteCoalesce bounds the adaptive write coalescing interval
	// (DefaultWriteCoalesce, 4ms): a connection is written at most once
	// per the node's current interval, which is zero while the node has
	// CPU to spare and grows, up to this, while writes take a large share
	// of it (delivery_coalesce.go). A connection that receives less than one
	// message per interval is never delayed. WriteCoalesceOff turns
	// coalescing off: every message is written as soon as a writer takes it.
	WriteCoalesce    time.Duration `yaml:"write_coalesce" default:"4ms" doc:"the longest a message may wait so that it goes out in one write with others to the same connection (at most 1s). Coalescing adapts to load: while the node has CPU to spare every message is written at once; while writes to sockets take a large share of its CPUs, a connection is written at most once per an interval that grows up to half this bound, and up to the bound only while each write carries at least 4 messages on average, and shrinks back when the load falls. A connection that receives less than one message per interval is never delayed. The current interval is the metric 'herald_client_write_coalesce_seconds'; see [architecture.md](architecture.md#the-connection-path)"`
	WriteCoalesceOff bool          `yaml:"write_coalesce_off" doc:"turn write coalescing off: every message is written as soon as a writer takes it, whatever the load (more write system calls, and more latency on a busy node)"`
	// RecoveryMaxPublicationLimit caps how many publications a recovery
	// may return; a longer gap is not recovered (300).
	RecoveryMaxPublicationLimit int `yaml:"recovery_max_publication_limit" default:"300" doc:"the longest gap a recovery fills; a longer one is not recovered"`
	// HistoryMaxPublicationLimit caps the history command's limit (300).
	HistoryMaxPublicationLimit int `yaml:"history_max_publication_limit" default:"300" doc:"the cap on a client's history 'limit' (-1 means this cap)"`
	// ConnectionLimit bounds the connected clients of this node; more are
	// refused with 3504 (0: no limit).
	ConnectionLimit int `yaml:"connection_limit" doc:"connected clients per node (0: no limit); more are closed with 3504"`
	// UserConnectionLimit bounds one user's connections on this node; more
	// are refused with 3504 (0: no limit). Anonymous clients are not counted.
	UserConnectionLimit int `yaml:"user_connection_limit" doc:"one user's connections per node (0: no limit); more are closed with 3504 (anonymous clients are not counted)"`
	// CommandRateLimit is how many commands per second one connection may
	// send on average, with bursts of CommandRateBurst (0: no limit). A
	// command over the limit gets error 111; a client that keeps going
	// (CommandRateBurst more) is closed with 3013.
	CommandRateLimit float64 `yaml:"command_rate_limit" doc:"commands per second one connection may send on average (0: no limit); over it a command gets error 111, and a client that keeps on ('command_rate_burst' more refused in a row) is closed with 3013"`
	CommandRateBurst int     `yaml:"command_rate_burst" doc:"how many commands may come at once above the average (0: the rate)"`
	// RateLimit is the operation rate limits per command, connection and
	// user, in Centrifugo PRO's shape (ratelimit_options.go).
	RateLimit RateLimitConfig `yaml:"rate_limit"`
	// PresenceTTL is how long a presence entry lives unless refreshed; the
	// hub refreshes its clients' entries every PresenceTTL/3 (60s).
	PresenceTTL time.Duration `yaml:"presence_ttl" default:"60s" doc:"presence entries expire this long after their node last refreshed them; nodes refresh every third of it"`
	// CommandTimeout bounds one command's engine calls and handlers (10s).
	// A command that runs out of time answers error 100 (internal) and the
	// client stays connected; the command's context is also cancelled when
	// the client goes away.
	CommandTimeout time.Duration `yaml:"command_timeout" default:"10s" doc:"bounds one client command's engine calls and handlers; a command that runs out of time gets error 100 (internal) and the client stays connected"`

	// AllowAnonymousConnectWithoutToken accepts a connect command that
	// carries no token, as an anonymous user.
	AllowAnonymousConnectWithoutToken bool `yaml:"allow_anonymous_connect_without_token" doc:"accept a connect without a token, as an anonymous user"`
	// DisallowAnonymousConnectionTokens refuses tokens with an empty sub
	// claim (3507).
	DisallowAnonymousConnectionTokens bool `yaml:"disallow_anonymous_connection_tokens" doc:"refuse tokens whose 'sub' is empty (close 3507)"`
	// Insecure accepts every connection and allows every channel
	// operation. For development only; the server logs a warning.
	Insecure bool `yaml:"insecure" doc:"development only: every client may connect and use every channel without a token. The log says so at start"`
	// UserStatusTTL is how long a user's status (update_user_status) is
	// kept after its last update.
	UserStatusTTL time.Duration `yaml:"user_status_ttl" default:"24h" doc:"how long a user's status (the API's update_user_status, or the client rpc of that name) is kept after its last update"`
	// UserStatusRPC lets a client mark its own user active with the rpc
	// method update_user_status, as Centrifugo PRO's built-in rpc does.
	UserStatusRPC bool `yaml:"user_status_rpc" doc:"answer the client rpc method 'update_user_status' (empty params) by marking the client's user active; the application's rpc handler never sees it"`
	// UserStatusOnlineInterval is how often this node records that its
	// connected users are online (userstatus_online.go); 0: never.
	UserStatusOnlineInterval time.Duration `yaml:"user_status_online_interval" doc:"how often this node records, for every user connected to it, that the user is online: the 'online' time of get_user_status (Unix seconds), as Centrifugo PRO keeps it, accurate to this interval and kept for 'user_status_ttl'. Each time costs one store write per connected user of the node. 0: off, and 'online' is always 0"`
	// SubscribeToUserPersonalChannel subscribes each connection of an
	// authenticated user to the user's personal channel (personal.go).
	SubscribeToUserPersonalChannel PersonalChannelOptions `yaml:"subscribe_to_user_personal_channel"`
	// Concurrency is how many commands of one connection may run at once
	// (command_concurrent.go); 0 or 1 runs them one after another.
	Concurrency int `yaml:"concurrency" doc:"how many commands of one connection may run at once, as Centrifugo's option (0 or 1: one after another, replies in the order of the commands). Above 1, commands about different channels and RPCs run side by side, so a slow proxy or engine call holds up only its own; replies go out as each finishes, matched to their command by id. Commands about one channel (subscribe, unsubscribe, publish, presence, history, sub_refresh) still run in the order sent, and connect, refresh, send and map subscriptions wait for every command before them and hold up those after"`
	// ConnectIncludeServerTime puts the server's time in connect results
	// (ConnectResult.time, Unix milliseconds), as Centrifugo's option of
	// the same name (centrifuge v0.40.1 client.go connectCmd).
	ConnectIncludeServerTime bool `yaml:"connect_include_server_time" doc:"put the server's time, in Unix milliseconds, in the connect result ('time'), so a client can estimate its clock's offset"`

	// UserIDHTTPHeader names the header a trusted proxy in front of the
	// node sets to the authenticated user (authenticate, in
	// lifecycle_connect.go).
	UserIDHTTPHeader string `yaml:"user_id_http_header" doc:"an HTTP header that carries the user of a connection, set by a proxy in front of Herald that authenticated it (as Centrifugo's): a client that connects with this header and without a token is that user (a token, or the connect proxy's answer, still comes first). Only set it when every request reaches Herald through that proxy, which must also remove the header from what clients send; the transports that have no HTTP request (uni_grpc) do not use it"`

	// ConnectCodeToUnidirectionalDisconnect: Centrifugo's code
	// transforms for unidirectional clients (uniconnect.go).
	ConnectCodeToUnidirectionalDisconnect UniDisconnectTransforms `yaml:"connect_code_to_unidirectional_disconnect"`
}

// DefaultNodeQueueMaxSize is ClientConfig.NodeQueueMaxSize when it is 0.
const DefaultNodeQueueMaxSize = 256 << 20

// MaxWriteCoalesce bounds ClientConfig.WriteCoalesce: longer would only
// add latency, and every busy connection's writes would wait for it.
const MaxWriteCoalesce = time.Second

// Validate checks the options that have no meaning out of range, as New
// does. It reports every problem, each an *OptionError naming the Go
// field (see OptionErrors).
func (c ClientConfig) Validate() error {
	var ps optionProblems
	c.check("", &ps)
	return ps.err()
}

// check adds c's problems to ps under the Go path prefix.
func (c ClientConfig) check(prefix string, ps *optionProblems) {
	for _, n := range []struct {
		field string
		v     int
	}{
		{"ChannelLimit", c.ChannelLimit}, {"QueueMaxSize", c.QueueMaxSize},
		{"ConnectionLimit", c.ConnectionLimit}, {"UserConnectionLimit", c.UserConnectionLimit},
		{"CommandRateBurst", c.CommandRateBurst}, {"Concurrency", c.Concurrency},
	} {
		if n.v < 0 {
			ps.add(prefix, n.field, fmt.Sprintf("%d: must not be negative", n.v))
		}
	}
	if c.NodeQueueMaxSize < -1 {
		ps.add(prefix, "NodeQueueMaxSize", fmt.Sprintf("%d: want bytes, 0 for the default or -1 for no bound", c.NodeQueueMaxSize))
	}
	if c.CommandRateLimit < 0 || math.IsNaN(c.CommandRateLimit) || math.IsInf(c.CommandRateLimit, 0) {
		ps.add(prefix, "CommandRateLimit", fmt.Sprintf("%v: want commands per second, or 0 for no limit", c.CommandRateLimit))
	}
	// A pong that may arrive after the next ping is due would let a dead
	// connection outlive a whole interval; zero takes the defaults, which
	// are in order.
	if c.PingInterval > 0 && c.PongTimeout > 0 && c.PongTimeout >= c.PingInterval {
		ps.add(prefix, "PongTimeout", fmt.Sprintf("%s must be shorter than PingInterval (%s)", c.PongTimeout, c.PingInterval))
	}
	c.ConnectCodeToUnidirectionalDisconnect.check(prefix, ps)
	c.RateLimit.check(joinField(prefix, "RateLimit"), ps)
	if d := c.WriteCoalesce; d < 0 || d > MaxWriteCoalesce {
		ps.add(prefix, "WriteCoalesce", fmt.Sprintf("%s: want the longest coalescing interval, up to %s (0: the default, %s; WriteCoalesceOff turns coalescing off)", d, MaxWriteCoalesce, DefaultWriteCoalesce))
	}
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
	setDur(&c.WriteCoalesce, DefaultWriteCoalesce)
	setDur(&c.UserStatusTTL, 24*time.Hour)
	setInt(&c.ChannelLimit, 128)
	setInt(&c.QueueMaxSize, 1<<20)
	if c.NodeQueueMaxSize == 0 {
		c.NodeQueueMaxSize = DefaultNodeQueueMaxSize
	}
	setInt(&c.RecoveryMaxPublicationLimit, 300)
	setInt(&c.HistoryMaxPublicationLimit, 300)
	if c.CommandRateLimit > 0 && c.CommandRateBurst <= 0 {
		c.CommandRateBurst = max(int(c.CommandRateLimit), 1)
	}
	return c
}
