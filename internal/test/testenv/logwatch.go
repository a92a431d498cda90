package testenv

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"
)

// LogWatch is a slog.Handler for code under test that remembers when each
// message was first logged, so that a fault test can wait for what an
// operator would see (a warning that a connection was lost, say) and time
// it, and can check that nothing was logged at error level.
type LogWatch struct {
	level slog.Level
	// state is shared by the handlers WithAttrs and WithGroup derive.
	state *logState
}

type logState struct {
	mu     sync.Mutex
	first  map[string]time.Time
	errors []string
}

// NewLogWatch returns a LogWatch that records messages at level and above.
func NewLogWatch(level slog.Level) *LogWatch {
	return &LogWatch{level: level, state: &logState{first: make(map[string]time.Time)}}
}

// Enabled implements slog.Handler.
func (w *LogWatch) Enabled(_ context.Context, l slog.Level) bool { return l >= w.level }

// Handle implements slog.Handler.
func (w *LogWatch) Handle(_ context.Context, r slog.Record) error {
	s := w.state
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.first[r.Message]; !ok {
		s.first[r.Message] = r.Time
	}
	if r.Level >= slog.LevelError {
		s.errors = append(s.errors, r.Message)
	}
	return nil
}

// WithAttrs implements slog.Handler; attributes are not recorded.
func (w *LogWatch) WithAttrs([]slog.Attr) slog.Handler { return w }

// WithGroup implements slog.Handler.
func (w *LogWatch) WithGroup(string) slog.Handler { return w }

// Await waits up to timeout for msg to be logged and returns when it first
// was.
func (w *LogWatch) Await(t testing.TB, msg string, timeout time.Duration) time.Time {
	t.Helper()
	var at time.Time
	Eventually(t, "log line "+strconv.Quote(msg), timeout, func() bool {
		w.state.mu.Lock()
		defer w.state.mu.Unlock()
		var ok bool
		at, ok = w.state.first[msg]
		return ok
	})
	return at
}

// Errors returns the messages logged at error level.
func (w *LogWatch) Errors() []string {
	w.state.mu.Lock()
	defer w.state.mu.Unlock()
	return append([]string(nil), w.state.errors...)
}
