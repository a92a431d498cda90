package server

import (
	"github.com/heraldhq/herald/hub"
)

// The hub's options are plain Go; these types are their file format, with
// the YAML keys and Duration's parsing, so the hub does not depend on a
// configuration syntax. Config.hubConfig is the one place that converts
// them, and a test checks that every hub option has its key here.

// ClientConfig is the client section: connection limits and timings (as
// hub.ClientConfig, whose fields document the defaults) plus the token keys.
type ClientConfig struct {
	PingInterval                      Duration    `yaml:"ping_interval"`
	PongTimeout                       Duration    `yaml:"pong_timeout"`
	StaleCloseDelay                   Duration    `yaml:"stale_close_delay"`
	ExpiredCloseDelay                 Duration    `yaml:"expired_close_delay"`
	ExpiredSubCloseDelay              Duration    `yaml:"expired_sub_close_delay"`
	ChannelLimit                      int         `yaml:"channel_limit"`
	QueueMaxSize                      int         `yaml:"queue_max_size"`
	WriteCoalesce                     Duration    `yaml:"write_coalesce"`
	RecoveryMaxPublicationLimit       int         `yaml:"recovery_max_publication_limit"`
	HistoryMaxPublicationLimit        int         `yaml:"history_max_publication_limit"`
	ConnectionLimit                   int         `yaml:"connection_limit"`
	UserConnectionLimit               int         `yaml:"user_connection_limit"`
	CommandRateLimit                  float64     `yaml:"command_rate_limit"`
	CommandRateBurst                  int         `yaml:"command_rate_burst"`
	PresenceTTL                       Duration    `yaml:"presence_ttl"`
	CommandTimeout                    Duration    `yaml:"command_timeout"`
	AllowAnonymousConnectWithoutToken bool        `yaml:"allow_anonymous_connect_without_token"`
	DisallowAnonymousConnectionTokens bool        `yaml:"disallow_anonymous_connection_tokens"`
	Insecure                          bool        `yaml:"insecure"`
	Token                             TokenConfig `yaml:"token"`
	// Proxy names the proxies of connect and refresh (config_proxy.go).
	Proxy ClientProxyConfig `yaml:"proxy"`
}

// ChannelConfig is the channel section (hub.ChannelConfig).
type ChannelConfig struct {
	MaxLength        int              `yaml:"max_length"`
	WithoutNamespace NamespaceOptions `yaml:"without_namespace"`
	Namespaces       []Namespace      `yaml:"namespaces"`
}

// Namespace is one entry of channel.namespaces (hub.Namespace).
type Namespace struct {
	Name             string `yaml:"name"`
	NamespaceOptions `yaml:",inline"`
}

// NamespaceOptions are a namespace's options (hub.NamespaceOptions).
type NamespaceOptions struct {
	Presence                   bool     `yaml:"presence"`
	JoinLeave                  bool     `yaml:"join_leave"`
	ForcePushJoinLeave         bool     `yaml:"force_push_join_leave"`
	HistorySize                int      `yaml:"history_size"`
	HistoryTTL                 Duration `yaml:"history_ttl"`
	HistoryMetaTTL             Duration `yaml:"history_meta_ttl"`
	ForcePositioning           bool     `yaml:"force_positioning"`
	AllowPositioning           bool     `yaml:"allow_positioning"`
	ForceRecovery              bool     `yaml:"force_recovery"`
	AllowRecovery              bool     `yaml:"allow_recovery"`
	AllowSubscribeForClient    bool     `yaml:"allow_subscribe_for_client"`
	AllowSubscribeForAnonymous bool     `yaml:"allow_subscribe_for_anonymous"`
	AllowPublishForSubscriber  bool     `yaml:"allow_publish_for_subscriber"`
	AllowPublishForClient      bool     `yaml:"allow_publish_for_client"`
	AllowPublishForAnonymous   bool     `yaml:"allow_publish_for_anonymous"`
	AllowHistoryForSubscriber  bool     `yaml:"allow_history_for_subscriber"`
	AllowHistoryForClient      bool     `yaml:"allow_history_for_client"`
	AllowHistoryForAnonymous   bool     `yaml:"allow_history_for_anonymous"`
	AllowPresenceForSubscriber bool     `yaml:"allow_presence_for_subscriber"`
	AllowPresenceForClient     bool     `yaml:"allow_presence_for_client"`
	AllowPresenceForAnonymous  bool     `yaml:"allow_presence_for_anonymous"`
	AllowUserLimitedChannels   bool     `yaml:"allow_user_limited_channels"`
	ChannelRegex               string   `yaml:"channel_regex"`
	// QueuePolicy is close (the default when empty) or drop_oldest.
	QueuePolicy string `yaml:"queue_policy"`
	// PublicationDataFormat is json (the default when empty),
	// json_object or binary: what publications must carry.
	PublicationDataFormat string `yaml:"publication_data_format"`
	// AllowedDeltaTypes lists the delta encodings subscribers may ask for
	// (only fossil).
	AllowedDeltaTypes []string `yaml:"allowed_delta_types"`
	// JoinLeaveMaxSubscribers stops join/leave events in channels with
	// more local subscribers (0: 1000; -1: no bound).
	JoinLeaveMaxSubscribers int `yaml:"join_leave_max_subscribers"`
	// NamespaceProxyOptions: subscribe_proxy, publish_proxy and
	// sub_refresh_proxy (config_proxy.go).
	NamespaceProxyOptions `yaml:",inline"`
	// NamespaceSQLChecks: subscribe_check and publish_check
	// (config_sqlauth.go).
	NamespaceSQLChecks `yaml:",inline"`
}

// hubConfig converts the hub's part of the configuration. The caller adds
// what a file cannot hold: the engine, token verifier and logger.
func (c Config) hubConfig() hub.Config {
	return hub.Config{
		Name:              c.Name,
		Version:           Version,
		Channels:          c.Channel.hub(),
		Client:            c.Client.hub(),
		IdempotencyWindow: c.HTTPAPI.IdempotencyWindow.D(),
		Emulation:         c.Emulation.hub(),
	}
}

func (c ClientConfig) hub() hub.ClientConfig {
	return hub.ClientConfig{
		PingInterval:                      c.PingInterval.D(),
		PongTimeout:                       c.PongTimeout.D(),
		StaleCloseDelay:                   c.StaleCloseDelay.D(),
		ExpiredCloseDelay:                 c.ExpiredCloseDelay.D(),
		ExpiredSubCloseDelay:              c.ExpiredSubCloseDelay.D(),
		ChannelLimit:                      c.ChannelLimit,
		QueueMaxSize:                      c.QueueMaxSize,
		WriteCoalesce:                     c.WriteCoalesce.D(),
		RecoveryMaxPublicationLimit:       c.RecoveryMaxPublicationLimit,
		HistoryMaxPublicationLimit:        c.HistoryMaxPublicationLimit,
		ConnectionLimit:                   c.ConnectionLimit,
		UserConnectionLimit:               c.UserConnectionLimit,
		CommandRateLimit:                  c.CommandRateLimit,
		CommandRateBurst:                  c.CommandRateBurst,
		PresenceTTL:                       c.PresenceTTL.D(),
		CommandTimeout:                    c.CommandTimeout.D(),
		AllowAnonymousConnectWithoutToken: c.AllowAnonymousConnectWithoutToken,
		DisallowAnonymousConnectionTokens: c.DisallowAnonymousConnectionTokens,
		Insecure:                          c.Insecure,
	}
}

func (c ChannelConfig) hub() hub.ChannelConfig {
	out := hub.ChannelConfig{MaxLength: c.MaxLength, WithoutNamespace: c.WithoutNamespace.hub()}
	if c.Namespaces != nil {
		out.Namespaces = make([]hub.Namespace, len(c.Namespaces))
		for i, ns := range c.Namespaces {
			out.Namespaces[i] = hub.Namespace{Name: ns.Name, NamespaceOptions: ns.NamespaceOptions.hub()}
		}
	}
	return out
}

func (o NamespaceOptions) hub() hub.NamespaceOptions {
	return hub.NamespaceOptions{
		Presence:                   o.Presence,
		JoinLeave:                  o.JoinLeave,
		ForcePushJoinLeave:         o.ForcePushJoinLeave,
		HistorySize:                o.HistorySize,
		HistoryTTL:                 o.HistoryTTL.D(),
		HistoryMetaTTL:             o.HistoryMetaTTL.D(),
		ForcePositioning:           o.ForcePositioning,
		AllowPositioning:           o.AllowPositioning,
		ForceRecovery:              o.ForceRecovery,
		AllowRecovery:              o.AllowRecovery,
		AllowSubscribeForClient:    o.AllowSubscribeForClient,
		AllowSubscribeForAnonymous: o.AllowSubscribeForAnonymous,
		AllowPublishForSubscriber:  o.AllowPublishForSubscriber,
		AllowPublishForClient:      o.AllowPublishForClient,
		AllowPublishForAnonymous:   o.AllowPublishForAnonymous,
		AllowHistoryForSubscriber:  o.AllowHistoryForSubscriber,
		AllowHistoryForClient:      o.AllowHistoryForClient,
		AllowHistoryForAnonymous:   o.AllowHistoryForAnonymous,
		AllowPresenceForSubscriber: o.AllowPresenceForSubscriber,
		AllowPresenceForClient:     o.AllowPresenceForClient,
		AllowPresenceForAnonymous:  o.AllowPresenceForAnonymous,
		AllowUserLimitedChannels:   o.AllowUserLimitedChannels,
		ChannelRegex:               o.ChannelRegex,
		QueuePolicy:                hub.QueuePolicy(o.QueuePolicy),
		PublicationDataFormat:      hub.DataFormat(o.PublicationDataFormat),
		AllowedDeltaTypes:          o.AllowedDeltaTypes,
		JoinLeaveMaxSubscribers:    o.JoinLeaveMaxSubscribers,
	}
}
