package sequence

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Retry runs f until it succeeds or the Sequencer stops, waiting
// Config.Backoff between failures, and reports whether f succeeded. Each
// attempt gets Config.ReadTimeout. Delivery cannot skip a read without
// losing order, so it waits out outages instead of giving up. Retry is
// for the Sequencer's goroutine: Resolve may use it for its reads.
func (s *Sequencer[M]) Retry(f func(ctx context.Context) error) bool {
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.ReadTimeout)
		err := f(ctx)
		cancel()
		if err == nil {
			if attempt > 1 {
				s.log.Info("history read for delivery succeeded after retries", "attempts", attempt)
			}
			return true
		}
		if s.stopped() {
			return false
		}
		level := slog.LevelDebug
		if attempt == 1 {
			level = slog.LevelWarn
		}
		wait := s.cfg.Backoff(attempt)
		s.log.Log(context.Background(), level, "history read for delivery failed, retrying", "error", err, "in", wait)
		if !s.pause(wait) {
			return false
		}
	}
}

// pause waits d, or less when the Sequencer stops; it reports whether the
// Sequencer still runs.
func (s *Sequencer[M]) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.quit:
		return false
	case <-t.C:
		return true
	}
}

// errTailCount rejects a History whose Tails answered the wrong number of
// cursors.
type errTailCount struct{ got, want int }

func (e errTailCount) Error() string {
	return fmt.Sprintf("history returned %d tails for %d cursors", e.got, e.want)
}
