package postgres

import (
	"log/slog"
	"sync/atomic"
)

// outage keeps a background task from logging the same failure on every
// tick while PostgreSQL is away: the first failure is a warning, the
// recovery an info line, and the failures between them are debug lines.
type outage struct {
	failing atomic.Bool
}

func (o *outage) fail(log *slog.Logger, msg string, args ...any) {
	if o.failing.Swap(true) {
		log.Debug(msg, args...)
		return
	}
	log.Warn(msg, args...)
}

func (o *outage) recovered(log *slog.Logger, msg string) {
	if o.failing.Swap(false) {
		log.Info(msg)
	}
}
