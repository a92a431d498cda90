package config

import (
	"fmt"
	"reflect"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/stateoutput"
)

// ChannelStateConfig is channel.state: the hub's options of channel state
// events (hub.ChannelStateConfig) and the outputs they are written to
// besides the state proxy, which the hub does not hold (it knows no
// database or queue).
type ChannelStateConfig struct {
	hub.ChannelStateConfig `yaml:",inline"`
	Outputs                []stateoutput.Config `yaml:"outputs" doc:"tables and queues the channel state events are written to, besides or instead of 'channel.state_proxy', a list with the keys below; see [proxy.md](proxy.md#outputs)"`
}

// StateOutputs returns the outputs of channel state events for
// stateoutput.OpenSet.
func (c Config) StateOutputs() []stateoutput.Config { return c.Channel.State.Outputs }

// stateEventProblems checks the outputs, and that the namespaces with
// state events have somewhere to send them: the proxy or an output.
func (c Config) stateEventProblems() Problems {
	// stateoutput.ValidateAll is what OpenSet checks: each output and
	// that their names are unique.
	errs := optionerr.Prefix("Outputs", stateoutput.ValidateAll(c.Channel.State.Outputs))
	ps := hubProblems(errs, reflect.TypeOf(c.Channel.State), "channel.state")
	if c.Channel.StateProxy != "" || len(c.Channel.State.Outputs) > 0 {
		return ps
	}
	const need = "needs channel.state_proxy or channel.state.outputs: where the events go"
	if c.Channel.WithoutNamespace.StateEvents {
		ps = append(ps, Problem{Key: "channel.without_namespace.state_proxy_enabled", Message: need})
	}
	for i, ns := range c.Channel.Namespaces {
		if ns.StateEvents {
			ps = append(ps, Problem{Key: fmt.Sprintf("channel.namespaces[%d].state_proxy_enabled", i), Message: need})
		}
	}
	return ps
}
