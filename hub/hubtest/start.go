package hubtest

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
)

// Start makes a hub with cfg and starts it, failing tb if either fails,
// and shuts it down when tb ends (within 10s, reporting an error from
// Shutdown). Cleanups registered after Start run before the shutdown, so
// a transport in front of the hub can be closed first.
func Start(tb testing.TB, cfg hub.Config) *hub.Hub {
	tb.Helper()
	h, err := hub.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			tb.Errorf("hub shutdown: %v", err)
		}
	})
	return h
}
