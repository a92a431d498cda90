package stateoutput

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/internal/kinds"
)

// Event is one channel state event, as the hub hands it over.
type Event = engine.ChannelStateEvent

// Output writes batches of channel state events somewhere.
type Output interface {
	// Write writes evs in order; an error means the batch (or part of
	// it) may not be written, and it is handed over again.
	Write(ctx context.Context, evs []Event) error
	// Close releases the output's connections.
	Close()
}

// Open opens the output c describes: it connects, and prepares what the
// output needs (the PostgreSQL table), so that a wrong configuration is
// found at start.
func Open(ctx context.Context, c Config) (Output, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	out, err := kinds.Open(kindTable(c), c.Type)
	if err != nil {
		return nil, err
	}
	if p, ok := out.(interface{ prepare(context.Context) error }); ok {
		if err := p.prepare(ctx); err != nil {
			out.Close()
			return nil, err
		}
	}
	return out, nil
}

// openAs is Open for the constructors of each type, which return their
// own type.
func openAs[T Output](ctx context.Context, c Config) (T, error) {
	out, err := Open(ctx, c)
	if err != nil {
		var zero T
		return zero, err
	}
	return out.(T), nil
}

// Set is the outputs of a node: one hub.Handlers.OnChannelState.
type Set struct {
	names   []string
	outputs []Output
}

// OpenSet opens every output of cfgs; on an error it closes those it
// opened.
func OpenSet(ctx context.Context, cfgs []Config) (*Set, error) {
	if err := ValidateAll(cfgs); err != nil {
		return nil, err
	}
	s := &Set{}
	for _, c := range cfgs {
		out, err := Open(ctx, c)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("channel state output %q: %w", c.Name, err)
		}
		s.names = append(s.names, c.Name)
		s.outputs = append(s.outputs, out)
	}
	return s, nil
}

// OnChannelState writes evs to every output, in order: the first that
// fails stops the rest and the hub hands the batch over again later, to
// every output (which each name an event so that a repeat is dropped or
// can be).
func (s *Set) OnChannelState(ctx context.Context, evs []Event) error {
	for i, out := range s.outputs {
		if err := out.Write(ctx, evs); err != nil {
			return fmt.Errorf("channel state output %q: %w", s.names[i], err)
		}
	}
	return nil
}

// Close closes every output.
func (s *Set) Close() {
	for _, out := range s.outputs {
		out.Close()
	}
}
