package hub

import (
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// SubscriptionType is what a namespace's channels are: streams (the
// default) or maps. Every subscriber of a channel uses its namespace's type.
type SubscriptionType string

// Subscription types, as Centrifugo names them.
const (
	SubscriptionStream     SubscriptionType = "stream"
	SubscriptionMap        SubscriptionType = "map"
	SubscriptionMapClients SubscriptionType = "map_clients"
	SubscriptionMapUsers   SubscriptionType = "map_users"
)

// Subscribe request types (SubscribeRequest.type) of map subscriptions.
const (
	requestTypeStream     = 0
	requestTypeMap        = 1
	requestTypeMapClients = 2
	requestTypeMapUsers   = 3
)

// MapMode says how a map channel keeps its state and how its subscribers
// recover.
type MapMode string

// Map modes. Ephemeral maps are read in full on every (re)subscribe;
// recoverable and persistent ones let a returning subscriber catch up from
// the change stream. Keys of ephemeral and recoverable maps expire after
// MapOptions.KeyTTL; those of persistent maps stay until removed.
const (
	MapEphemeral   MapMode = "ephemeral"
	MapRecoverable MapMode = "recoverable"
	MapPersistent  MapMode = "persistent"
	// mapDurable is the name Centrifugo 6.8 gave MapRecoverable.
	mapDurable MapMode = "durable"
)

// MapClientKey makes the server choose the key of a client's map publish
// and remove.
type MapClientKey string

// Server-chosen keys.
const (
	MapKeyClientID MapClientKey = "client_id"
	MapKeyUserID   MapClientKey = "user_id"
)

// Map page-size defaults (MapOptions).
const (
	defaultMapPageSize    = 100
	defaultMapMinPageSize = 100
	defaultMapMaxPageSize = 1000
	// defaultMapStreamSize and defaultMapStreamTTL keep the change stream
	// subscribers join the live flow through, in every mode.
	defaultMapStreamSize = 100
	defaultMapStreamTTL  = time.Minute
	// MaxMapKeyLength bounds a map key, in bytes.
	MaxMapKeyLength = 1024
)

// MapOptions are the options of a namespace whose subscription type is a
// map one.
type MapOptions struct {
	Mode       MapMode       `yaml:"mode" doc:"'ephemeral' (a returning subscriber reads the whole state again), 'recoverable' (it catches up from the change stream; 'durable' is accepted as the older name) or 'persistent' (as recoverable, and keys never expire); required with a map 'subscription_type'"`
	KeyTTL     time.Duration `yaml:"key_ttl" doc:"a key not published again within this is removed (the removal reaches subscribers as any other); required in the 'ephemeral' and 'recoverable' modes, not allowed in 'persistent'"`
	StreamSize int           `yaml:"stream_size" doc:"how many changes the change stream keeps (0: 100)"`
	StreamTTL  time.Duration `yaml:"stream_ttl" doc:"how long the change stream keeps changes after the last one (0: 1m)"`
	MetaTTL    time.Duration `yaml:"meta_ttl" doc:"how long the change stream's position outlives its last change (0: the engine default, 30 days)"`

	DefaultPageSize int `yaml:"default_page_size" doc:"entries per state or stream page when the client names no 'limit' (0: 100)"`
	MinPageSize     int `yaml:"min_page_size" doc:"a smaller client 'limit' is raised to this (0: 100)"`
	MaxPageSize     int `yaml:"max_page_size" doc:"the largest client 'limit'; a larger one gets error 107 (0: 1000)"`

	// The catch-up before going live (mapcatchup.go).
	LiveTransitionMaxPublicationLimit int           `yaml:"live_transition_max_publication_limit" doc:"the most changes the reply that makes a subscriber live may carry: those made since the position its last stream (or state) read reached, as Centrifugo's option. A subscriber further behind gets error 112 and starts again from the state (0: 'max_page_size'; -1: no bound)"`
	SubscribeCatchUpTimeout           time.Duration `yaml:"subscribe_catch_up_timeout" doc:"the longest a subscriber may take from its first state (or recovering stream) request to going live; a later request of the flow closes the connection with 3008 (slow), as Centrifugo's option (0: no bound, Herald's default; Centrifugo's is 5s, which the importer writes for its files)"`

	AllowPublishForClient     bool `yaml:"allow_publish_for_client" doc:"authenticated clients may set keys (map publish)"`
	AllowPublishForSubscriber bool `yaml:"allow_publish_for_subscriber" doc:"subscribers of the channel may set keys"`
	AllowPublishForAnonymous  bool `yaml:"allow_publish_for_anonymous" doc:"anonymous clients may set keys (together with one of the two above)"`
	AllowRemoveForClient      bool `yaml:"allow_remove_for_client" doc:"authenticated clients may remove keys (map remove)"`
	AllowRemoveForSubscriber  bool `yaml:"allow_remove_for_subscriber" doc:"subscribers of the channel may remove keys"`
	AllowRemoveForAnonymous   bool `yaml:"allow_remove_for_anonymous" doc:"anonymous clients may remove keys (together with one of the two above)"`

	ClientKey                 MapClientKey `yaml:"client_key" doc:"'client_id' or 'user_id': the key of a client's map publish and remove is its connection id or user id, whatever it sent (empty: the client's key)"`
	RemoveClientOnUnsubscribe bool         `yaml:"remove_client_on_unsubscribe" doc:"when a client leaves the channel, the key named by its connection id is removed"`

	MaxKeys          int `yaml:"max_keys" doc:"the most keys a channel holds (0 means 100000; -1 means no bound): a new key beyond it is refused with error 106 (limit exceeded), from clients, the server API and presence alike, and changes nothing; changes of keys it holds and removals go through. Keys past their key_ttl not yet removed count"`
	MaxKeysPerClient int `yaml:"max_keys_per_client" doc:"the most distinct keys one connection may set in a channel (0 means 1000; -1 means no bound); a key it removes frees its place. A client's map publish beyond it gets error 106. Counted per connection on its node"`
}

// isMap reports whether the namespace's channels are maps.
func (o NamespaceOptions) isMap() bool {
	switch o.SubscriptionType {
	case SubscriptionMap, SubscriptionMapClients, SubscriptionMapUsers:
		return true
	}
	return false
}

// requestType is the subscribe request type of the namespace's channels.
func (o NamespaceOptions) requestType() int32 {
	switch o.SubscriptionType {
	case SubscriptionMap:
		return requestTypeMap
	case SubscriptionMapClients:
		return requestTypeMapClients
	case SubscriptionMapUsers:
		return requestTypeMapUsers
	}
	return requestTypeStream
}

func (o MapOptions) mode() MapMode {
	if o.Mode == mapDurable {
		return MapRecoverable
	}
	return o.Mode
}

// publishOptions are the engine options of a change.
func (o MapOptions) publishOptions() engine.MapPublishOptions {
	return engine.MapPublishOptions{
		StreamSize: orDefault(o.StreamSize, defaultMapStreamSize),
		StreamTTL:  orDefaultDuration(o.StreamTTL, defaultMapStreamTTL),
		MetaTTL:    o.MetaTTL,
		KeyTTL:     o.KeyTTL,
		MaxKeys:    o.maxKeys(),
	}
}

// pageLimit is the page size for a client's limit, or error 107 for one
// above the maximum or below zero.
func (o MapOptions) pageLimit(requested int32) (int, *Error) {
	maxSize := orDefault(o.MaxPageSize, defaultMapMaxPageSize)
	switch {
	case requested < 0 || int(requested) > maxSize:
		return 0, newError(protocol.ErrorBadRequest)
	case requested == 0:
		return min(orDefault(o.DefaultPageSize, defaultMapPageSize), maxSize), nil
	}
	return min(max(int(requested), orDefault(o.MinPageSize, defaultMapMinPageSize)), maxSize), nil
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

func orDefaultDuration(v, d time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return d
}

// checkMapOptions adds the problems of a namespace's map options to ps.
func checkMapOptions(o NamespaceOptions, field string, ps *optionProblems) {
	switch o.SubscriptionType {
	case "", SubscriptionStream, SubscriptionSharedPoll:
		if o.Map != (MapOptions{}) {
			ps.add(field, "Map", fmt.Sprintf("map options need a map SubscriptionType (%s, %s or %s)", SubscriptionMap, SubscriptionMapClients, SubscriptionMapUsers))
		}
		return
	case SubscriptionMap, SubscriptionMapClients, SubscriptionMapUsers:
	default:
		ps.add(field, "SubscriptionType", fmt.Sprintf("%q: want %s, %s, %s, %s or %s", o.SubscriptionType, SubscriptionStream, SubscriptionMap, SubscriptionMapClients, SubscriptionMapUsers, SubscriptionSharedPoll))
		return
	}
	m := o.Map
	mf := joinField(field, "Map")
	switch m.mode() {
	case MapEphemeral, MapRecoverable:
		if m.KeyTTL <= 0 {
			ps.add(mf, "KeyTTL", fmt.Sprintf("the %s mode needs a positive KeyTTL", m.Mode))
		}
	case MapPersistent:
		if m.KeyTTL != 0 {
			ps.add(mf, "KeyTTL", "keys of the persistent mode never expire: leave KeyTTL zero")
		}
	case "":
		ps.add(mf, "Mode", fmt.Sprintf("required with SubscriptionType %s: %s, %s or %s", o.SubscriptionType, MapEphemeral, MapRecoverable, MapPersistent))
	default:
		ps.add(mf, "Mode", fmt.Sprintf("%q: want %s, %s or %s", m.Mode, MapEphemeral, MapRecoverable, MapPersistent))
	}
	for name, v := range map[string]int{"StreamSize": m.StreamSize, "DefaultPageSize": m.DefaultPageSize, "MinPageSize": m.MinPageSize, "MaxPageSize": m.MaxPageSize} {
		if v < 0 {
			ps.add(mf, name, fmt.Sprintf("%d: want 0 (the default) or a positive number", v))
		}
	}
	if m.LiveTransitionMaxPublicationLimit < -1 {
		ps.add(mf, "LiveTransitionMaxPublicationLimit", fmt.Sprintf("%d: want -1 (no bound), 0 (MaxPageSize) or a positive number", m.LiveTransitionMaxPublicationLimit))
	}
	if m.SubscribeCatchUpTimeout < 0 {
		ps.add(mf, "SubscribeCatchUpTimeout", "must not be negative (0: no bound)")
	}
	if m.StreamTTL < 0 || m.MetaTTL < 0 || m.KeyTTL < 0 {
		ps.add(mf, "StreamTTL", "StreamTTL, MetaTTL and KeyTTL must not be negative")
	}
	if orDefault(m.MinPageSize, defaultMapMinPageSize) > orDefault(m.MaxPageSize, defaultMapMaxPageSize) {
		ps.add(mf, "MinPageSize", fmt.Sprintf("%d is above MaxPageSize %d", orDefault(m.MinPageSize, defaultMapMinPageSize), orDefault(m.MaxPageSize, defaultMapMaxPageSize)))
	}
	checkMapKeyBounds(m, mf, ps)
	switch m.ClientKey {
	case "", MapKeyClientID, MapKeyUserID:
	default:
		ps.add(mf, "ClientKey", fmt.Sprintf("%q: want %s or %s (or empty)", m.ClientKey, MapKeyClientID, MapKeyUserID))
	}
	if o.HasHistory() {
		ps.add(field, "HistorySize", "a map namespace keeps its change stream (Map.StreamSize, Map.StreamTTL), not history")
	}
}

// refuseMapNamespaces refuses the map namespaces of cfg, for an engine
// that keeps no map state (NATS; engine.MapsOf says so).
func refuseMapNamespaces(cfg ChannelConfig, e engine.Engine, prefix string) error {
	var ps optionProblems
	if cfg.WithoutNamespace.isMap() {
		ps.add(joinField(prefix, "WithoutNamespace"), "SubscriptionType", fmt.Sprintf("%s: the engine (%T) keeps no map state; map channels need an engine that keeps map state (memory, Redis or PostgreSQL)", cfg.WithoutNamespace.SubscriptionType, e))
	}
	for i, ns := range cfg.Namespaces {
		if ns.isMap() {
			ps.add(joinField(prefix, fmt.Sprintf("Namespaces[%d]", i)), "SubscriptionType", fmt.Sprintf("%s: the engine (%T) keeps no map state; map channels need an engine that keeps map state (memory, Redis or PostgreSQL)", ns.SubscriptionType, e))
		}
	}
	return ps.err()
}
