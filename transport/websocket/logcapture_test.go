package websocket

import (
	"context"
	"log/slog"
	"sync"
)

// logCapture is a slog.Handler that keeps every record, for tests that
// check what the transport logs.
type logCapture struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (l *logCapture) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r.Clone())
	l.mu.Unlock()
	return nil
}

func (l *logCapture) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCapture) WithGroup(string) slog.Handler      { return l }

// matching returns the records at level or above whose message is msg
// ("" matches any message).
func (l *logCapture) matching(level slog.Level, msg string) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.records {
		if r.Level >= level && (msg == "" || r.Message == msg) {
			out = append(out, r)
		}
	}
	return out
}

// attr returns the value of r's attribute key as a string.
func attr(r slog.Record, key string) string {
	var v string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}
