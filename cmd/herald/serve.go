package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/server"
)

func serveCommand() *cobra.Command {
	var (
		configPath string
		address    string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a Herald node (memory engine, port 8000, /connection/websocket unless configured)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := server.DefaultConfig()
			if configPath != "" {
				var err error
				if cfg, err = server.LoadConfig(configPath); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("address") {
				cfg.Address = address
			}
			log := newLogger(cfg.Log)
			srv, err := server.New(cfg, log)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if err := srv.Start(ctx); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				log.Info("shutting down")
			case err := <-srv.Done():
				if err != nil {
					return fmt.Errorf("http server: %w", err)
				}
			}
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return srv.Shutdown(sctx)
		},
	}
	cmd.Flags().StringVarP(&configPath, "config", "c", "", "YAML configuration file (see docs/configuration.md)")
	cmd.Flags().StringVar(&address, "address", ":8000", "address to listen on, overrides the config file")
	return cmd
}

func newLogger(cfg server.LogConfig) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Level))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
