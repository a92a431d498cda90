package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/server"
)

func serveCommand() *cobra.Command {
	var (
		configPath                       string
		address, name, level, format     string
		secret, engineType, adminAddress string
		insecure                         bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a Herald node (memory engine, port 8000, /connection/websocket unless configured)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(configPath)
			if err != nil {
				return err
			}
			// Flags override the file and the environment.
			f := cmd.Flags()
			setIf := func(flag string, dst *string, v string) {
				if f.Changed(flag) {
					*dst = v
				}
			}
			setIf("address", &cfg.Address, address)
			setIf("name", &cfg.Name, name)
			setIf("log-level", &cfg.Log.Level, level)
			setIf("log-format", &cfg.Log.Format, format)
			setIf("hmac-secret", &cfg.Client.Token.HMACSecretKey, secret)
			setIf("engine", &cfg.Engine.Type, engineType)
			setIf("admin-address", &cfg.Admin.Address, adminAddress)
			if f.Changed("insecure") {
				cfg.Client.Insecure = insecure
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("configuration:\n%w", err)
			}
			log := newLogger(cfg.Log)
			for _, w := range cfg.Warnings() {
				log.Warn(w)
			}
			logFileLimit(log)
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
			sctx, cancel := context.WithTimeout(context.Background(), cfg.Shutdown.Timeout.D())
			defer cancel()
			return srv.Shutdown(sctx)
		},
	}
	cmd.Flags().StringVarP(&configPath, "config", "c", "", "YAML configuration file (see docs/configuration.md)")
	f := cmd.Flags()
	f.StringVar(&address, "address", ":8000", "address to listen on (address)")
	f.StringVar(&name, "name", "", "node name (name)")
	f.StringVar(&level, "log-level", "info", "debug, info, warn or error (log.level)")
	f.StringVar(&format, "log-format", "text", "text or json (log.format)")
	f.StringVar(&secret, "hmac-secret", "", "HMAC secret for connection and subscription tokens (client.token.hmac_secret_key)")
	f.StringVar(&engineType, "engine", "memory", "engine type (engine.type)")
	f.StringVar(&adminAddress, "admin-address", "", "address of the admin listener with pprof, off when empty (admin.address)")
	f.BoolVar(&insecure, "insecure", false, "development only: no authentication or permission checks (client.insecure)")
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
