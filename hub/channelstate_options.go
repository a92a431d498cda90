package hub

import (
	"time"

	"github.com/heraldhq/herald/engine"
)

// ChannelStateEvent is one occupied or vacated event (channelstate.go).
type ChannelStateEvent = engine.ChannelStateEvent

// Channel state event types, as Centrifugo PRO names them.
const (
	ChannelOccupied = engine.ChannelOccupied
	ChannelVacated  = engine.ChannelVacated
)

// ChannelStateConfig is channel.state: how channel state events
// (NamespaceOptions.StateEvents) are made.
type ChannelStateConfig struct {
	// VacatedEventDelay is Centrifugo PRO's channel_state.vacated_event_delay.
	VacatedEventDelay time.Duration `yaml:"vacated_event_delay" default:"5s" doc:"how long a channel must stay without subscribers on every node before its 'vacated' event is made; a subscriber that comes back within it cancels the event (and no 'occupied' follows). 0 means the default; a negative value vacates at once"`
	// NodeTTL bounds how long a node that died without stopping keeps
	// its channels occupied.
	NodeTTL time.Duration `yaml:"node_ttl" default:"30s" doc:"a node's claim on its channels lapses this long after it last renewed it (every third of it): the channels of a node that died without stopping are then left as if its subscribers had gone, and vacated after 'vacated_event_delay'. At least 3s"`
	// QueueSize bounds the events waiting for delivery on the engines
	// that keep them in memory (engine.ChannelStateOptions.MaxQueue).
	QueueSize int `yaml:"queue_size" default:"100000" doc:"the most events waiting for delivery (a backend down or slow) on the memory and Redis engines, which keep them in memory (on Redis each of the 16 partitions keeps a 16th of it): past it the oldest waiting event is dropped for the new one, as Centrifugo PRO does, and counted in 'herald_channel_state_events_dropped_total'. PostgreSQL keeps its events on disk, unbounded. 0 means the default; a negative value keeps them all"`
}

// Defaults of ChannelStateConfig.
const (
	DefaultVacatedEventDelay = 5 * time.Second
	DefaultChannelStateTTL   = 30 * time.Second
	// DefaultChannelStateQueue is QueueSize's default: 100,000 events of
	// some 100 bytes each, minutes of a busy cluster's changes.
	DefaultChannelStateQueue = 100000
	minChannelStateTTL       = 3 * time.Second
)

// engineOptions are the options as the engine takes them, defaults
// applied.
func (c ChannelStateConfig) engineOptions() engine.ChannelStateOptions {
	o := engine.ChannelStateOptions{VacatedDelay: c.VacatedEventDelay, NodeTTL: c.NodeTTL}
	switch {
	case o.VacatedDelay == 0:
		o.VacatedDelay = DefaultVacatedEventDelay
	case o.VacatedDelay < 0:
		o.VacatedDelay = 0
	}
	if o.NodeTTL == 0 {
		o.NodeTTL = DefaultChannelStateTTL
	}
	switch o.MaxQueue = c.QueueSize; {
	case o.MaxQueue == 0:
		o.MaxQueue = DefaultChannelStateQueue
	case o.MaxQueue < 0:
		o.MaxQueue = 0
	}
	return o
}

func (c ChannelStateConfig) check(prefix string, ps *optionProblems) {
	if c.NodeTTL != 0 && c.NodeTTL < minChannelStateTTL {
		ps.add(prefix, "NodeTTL", "must be at least 3s")
	}
}

// hasStateEvents reports whether any namespace of cfg asks for channel
// state events.
func (cfg ChannelConfig) hasStateEvents() bool {
	if cfg.WithoutNamespace.StateEvents {
		return true
	}
	for _, ns := range cfg.Namespaces {
		if ns.StateEvents {
			return true
		}
	}
	return false
}
