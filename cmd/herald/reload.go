package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/heraldhq/herald/server"
)

// reloadOnHangup reads the listeners' certificate files again on every
// SIGHUP (systemd's ExecReload, `kill -HUP`) until ctx ends. Without it a
// SIGHUP would end the process. On Windows, which has no SIGHUP, it never
// fires; the files are still reloaded when they change.
func reloadOnHangup(ctx context.Context, srv *server.Server, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := srv.ReloadTLS(); err != nil {
					log.Error("SIGHUP: TLS certificates not reloaded; the previous ones stay in use", "error", err)
				} else {
					log.Info("SIGHUP: TLS certificates reloaded")
				}
			}
		}
	}()
}
