// Package servertest starts a whole Herald node (package server) in a
// test's process, for the tests outside package server that need one: the
// command's, the deployment files' and the load tool's.
package servertest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/server"
)

// shutdownTimeout bounds the shutdown at the end of a test: a node that
// takes longer has hung, and the test says so.
const shutdownTimeout = 10 * time.Second

// Start starts a node from cfg as it is (the caller chooses its address,
// usually "127.0.0.1:0", and its engine), logging nowhere, and shuts it
// down when t ends; a failed shutdown fails the test.
func Start(t testing.TB, cfg config.Config) *server.Server {
	t.Helper()
	s, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}
