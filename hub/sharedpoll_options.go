package hub

import (
	"errors"
	"fmt"
	"time"
)

// SubscriptionSharedPoll makes a namespace's channels shared poll ones: a
// subscriber tracks keys (signed by the application, see
// SharedPollConfig), the node polls the application's refresh backend for
// them, once per key whatever the number of trackers, and pushes each
// change to the connections tracking the key (sharedpoll.go).
const SubscriptionSharedPoll SubscriptionType = "shared_poll"

// requestTypeSharedPoll is SubscribeRequest.type of a shared poll
// subscription (centrifugal/protocol v0.19.2).
const requestTypeSharedPoll = 4

// Shared poll modes (SharedPollOptions.Mode).
const (
	// SharedPollVersioned: the backend gives each key a version; a key is
	// pushed when its version grows, and the node sends the version it
	// holds in each refresh request so the backend can leave unchanged
	// keys out.
	SharedPollVersioned = "versioned"
	// SharedPollVersionless: the backend returns data only; the node
	// compares it with the previous data and numbers the changes itself.
	SharedPollVersionless = "versionless"
)

// Defaults of SharedPollOptions, those of centrifugal/centrifuge v0.40.1
// (config.go, SharedPollChannelOptions), which Centrifugo 6.9.1 uses for
// a zero value.
const (
	DefaultSharedPollRefreshInterval      = 10 * time.Second
	DefaultSharedPollRefreshBatchSize     = 1000
	DefaultSharedPollMaxKeysPerConnection = 5000
	// DefaultSharedPollTrackExpiredExtraDelay: centrifuge v0.40.1
	// (client.go) takes 25 s for a zero TrackExpiredExtraDelay.
	DefaultSharedPollTrackExpiredExtraDelay = 25 * time.Second
)

// SharedPollOptions are the options of a namespace whose subscription type
// is SubscriptionSharedPoll. The names and defaults are Centrifugo's
// (internal/configtypes/namespace.go, SharedPollConfig).
type SharedPollOptions struct {
	ProxyName            string        `yaml:"proxy_name" doc:"the name of the proxy (in 'proxies') the node polls for the keys' data (its 'SharedPollRefresh'); required for a 'shared_poll' namespace"`
	Mode                 string        `yaml:"mode" default:"versionless" doc:"'versioned' (the backend returns a version per key; a key is pushed when its version grows) or 'versionless' (the backend returns data only; a key is pushed when its data changes)"`
	RefreshInterval      time.Duration `yaml:"refresh_interval" default:"10s" doc:"how often the node asks the backend for every key tracked on it"`
	RefreshBatchSize     int           `yaml:"refresh_batch_size" default:"1000" doc:"keys per refresh request; more keys are asked in several requests"`
	MaxKeysPerConnection int           `yaml:"max_keys_per_connection" default:"5000" doc:"keys one connection may track in one channel; a track beyond it gets error 106"`
	PublishEnabled       bool          `yaml:"publish_enabled" doc:"the server API's 'shared_poll_publish' may push a new version of a key at once, on every node; needs the 'versioned' mode"`
	// TrackExpiredExtraDelay: a key whose track signature expired
	// still gets pushes this long, for the client to track it again
	// with a new signature (Centrifugo's track_expired_extra_delay).
	TrackExpiredExtraDelay time.Duration `yaml:"track_expired_extra_delay" default:"25s" doc:"how long a key whose track signature expired keeps getting pushes, for the client to track it again with a new signature; after it the key is untracked"`
}

// WithDefaults is o with the defaults in its zero fields.
func (o SharedPollOptions) WithDefaults() SharedPollOptions {
	if o.Mode == "" {
		o.Mode = SharedPollVersionless
	}
	o.RefreshInterval = orDefaultDuration(o.RefreshInterval, DefaultSharedPollRefreshInterval)
	o.RefreshBatchSize = orDefault(o.RefreshBatchSize, DefaultSharedPollRefreshBatchSize)
	o.MaxKeysPerConnection = orDefault(o.MaxKeysPerConnection, DefaultSharedPollMaxKeysPerConnection)
	o.TrackExpiredExtraDelay = orDefaultDuration(o.TrackExpiredExtraDelay, DefaultSharedPollTrackExpiredExtraDelay)
	return o
}

func (o SharedPollOptions) versionless() bool {
	return o.Mode == "" || o.Mode == SharedPollVersionless
}

// checkSharedPollOptions adds the problems of a namespace's shared poll
// options to ps. Options of other namespaces are not checked: the file
// format fills in their defaults everywhere.
func checkSharedPollOptions(o NamespaceOptions, field string, ps *optionProblems) {
	if o.SubscriptionType != SubscriptionSharedPoll {
		return
	}
	sp := o.SharedPoll
	f := joinField(field, "SharedPoll")
	switch sp.Mode {
	case "", SharedPollVersioned, SharedPollVersionless:
	default:
		ps.add(f, "Mode", fmt.Sprintf("%q: want %s or %s", sp.Mode, SharedPollVersioned, SharedPollVersionless))
	}
	if sp.RefreshInterval < 0 || sp.RefreshBatchSize < 0 || sp.MaxKeysPerConnection < 0 || sp.TrackExpiredExtraDelay < 0 {
		ps.add(f, "RefreshInterval", "RefreshInterval, RefreshBatchSize, MaxKeysPerConnection and TrackExpiredExtraDelay must not be negative")
	}
	if sp.PublishEnabled && sp.versionless() {
		// As Centrifugo 6.9.1 (internal/config/validate.go): a publish
		// carries a version, which the versionless mode does not have.
		ps.add(f, "PublishEnabled", "needs the versioned mode (a publish carries a version)")
	}
	if o.HasHistory() {
		ps.add(field, "HistorySize", "a shared poll namespace keeps no history")
	}
}

// checkSharedPollConfig refuses shared poll namespaces that could never
// deliver: without the key that signs tracked batches, or without a
// refresh handler to poll.
func checkSharedPollConfig(cfg Config) error {
	uses := cfg.Channels.WithoutNamespace.SubscriptionType == SubscriptionSharedPoll
	for _, ns := range cfg.Channels.Namespaces {
		uses = uses || ns.SubscriptionType == SubscriptionSharedPoll
	}
	switch {
	case !uses:
		return nil
	case cfg.SharedPoll.HMACSecretKey == "":
		return errors.New("SharedPoll.HMACSecretKey is required with a shared_poll namespace: clients track keys signed with it")
	case cfg.Handlers.OnSharedPollRefresh == nil:
		return errors.New("Handlers.OnSharedPollRefresh is required with a shared_poll namespace: it gives the keys' data (the proxy's shared_poll.proxy_name)")
	}
	return nil
}
