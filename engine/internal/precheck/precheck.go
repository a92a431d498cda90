// Package precheck holds the checks every engine runs before its calls:
// whether the engine is closed or not yet started, and the arguments of
// join and leave events, so that all engines refuse the same calls with
// the same errors.
package precheck

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/heraldhq/herald/engine"
)

// ErrEmptyChannel rejects the empty channel name.
var ErrEmptyChannel = errors.New("empty channel name")

// State is an engine's lifecycle: Ready once Start has delivery running,
// Closed from Close on.
type State struct {
	Closed atomic.Bool
	Ready  atomic.Bool
}

// Usable reports why a call that only reads or writes data cannot
// proceed, if it cannot.
func (s *State) Usable(ctx context.Context) error {
	if s.Closed.Load() {
		return engine.ErrClosed
	}
	return ctx.Err()
}

// Deliverable is Usable for calls that need delivery running; notStarted
// is the engine's own error for a call before Start.
func (s *State) Deliverable(ctx context.Context, notStarted error) error {
	if err := s.Usable(ctx); err != nil {
		return err
	}
	if !s.Ready.Load() {
		return notStarted
	}
	return nil
}

// JoinLeave checks a join (leave false) or leave event before it is sent,
// and returns its name for the caller's error messages.
func JoinLeave(ctx context.Context, s *State, notStarted error, leave bool, ch string, info *engine.ClientInfo) (what string, err error) {
	what = "join"
	if leave {
		what = "leave"
	}
	if info == nil {
		return what, fmt.Errorf("publish %s %q: nil client info", what, ch)
	}
	if ch == "" {
		return what, fmt.Errorf("publish %s: %w", what, ErrEmptyChannel)
	}
	if err := s.Deliverable(ctx, notStarted); err != nil {
		return what, fmt.Errorf("publish %s %q: %w", what, ch, err)
	}
	return what, nil
}
