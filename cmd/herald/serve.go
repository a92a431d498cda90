package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/server"
)

func serveCommand() *cobra.Command {
	var (
		configPath, configFormat         string
		address, name, level, format     string
		secret, engineType, adminAddress string
		insecure, ephemeralKeys, strict  bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a Herald node (memory engine, port 8000, /connection/websocket unless configured)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfigFormat(configPath, configFormat)
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
			if err := strictCheck(cfg, strict); err != nil {
				return fmt.Errorf("configuration:\n%w", err)
			}
			return runNode(cmd, cfg, nodeOptions{
				ephemeralKeys: ephemeralKeys, configPath: configPath, addressFlag: f.Changed("address"),
			})
		},
	}
	cmd.Flags().StringVarP(&configPath, "config", "c", "", "configuration file: Herald's YAML (see docs/configuration.md) or a Centrifugo v6 file")
	addConfigFormatFlag(cmd, &configFormat)
	addStrictFlag(cmd, &strict)
	f := cmd.Flags()
	f.StringVar(&address, "address", ":8000", "address to listen on (address); a run with generated keys and no address set listens on 127.0.0.1:8000")
	f.StringVar(&name, "name", "", "node name (name)")
	f.StringVar(&level, "log-level", "info", "debug, info, warn or error (log.level)")
	f.StringVar(&format, "log-format", "text", "text or json (log.format)")
	f.StringVar(&secret, "hmac-secret", "", "HMAC secret for connection and subscription tokens (client.token.hmac_secret_key)")
	f.StringVar(&engineType, "engine", "memory", "engine type (engine.type)")
	f.StringVar(&adminAddress, "admin-address", "", "address of the admin listener with pprof, off when empty (admin.address)")
	f.BoolVar(&ephemeralKeys, "ephemeral-keys", true, "with no client.token key and no http_api.key configured, generate random ones for this run and print them with a token and examples (false: refuse every connection, API off)")
	f.BoolVar(&insecure, "insecure", false, "development only: no authentication or permission checks (client.insecure)")
	return cmd
}

// nodeOptions are what serve's flags say beyond the configuration.
type nodeOptions struct {
	ephemeralKeys bool   // generate keys for this run when none are configured
	configPath    string // the file read, "" for none
	addressFlag   bool   // the listen address was given on the command line
}

// runNode validates cfg, starts a node with it and runs it until a signal
// or the server stops; herald serve and Centrifugo's root command share it.
func runNode(cmd *cobra.Command, cfg config.Config, opts nodeOptions) error {
	// With nothing about authentication configured the node would
	// refuse every connection and keep its API off: make up keys
	// for this run instead, unless told not to.
	var generated *generatedKeys
	if opts.ephemeralKeys && cfg.AuthUnconfigured() {
		keys := newGeneratedKeys()
		generated = &keys
		cfg.Client.Token.HMACSecretKey = keys.HMACSecret
		cfg.HTTPAPI.Key = keys.APIKey
		cfg.Address = loopbackWhenUnset(cfg.Address, addressChosen(cfg, opts.configPath, opts.addressFlag, os.LookupEnv))
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	out, closeLog, err := logOutput(cmd.ErrOrStderr(), cfg.Log) // processfiles.go
	if err != nil {
		return err
	}
	defer closeLog()
	log := newLogger(out, cfg.Log)
	removePID, err := writePIDFile(cfg.PIDFile)
	if err != nil {
		return err
	}
	defer removePID()
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	if line := cfg.CentrifugoReport().NotNeededLine(); line != "" {
		log.Info(line)
	}
	if generated != nil {
		log.Warn("no client.token key and no http_api.key are configured: using random keys generated for this run only; " +
			"they change at every start (config init writes permanent ones, --ephemeral-keys=false turns this off)")
	}
	logFileLimit(log)
	srv, err := server.New(cfg, log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	reloadOnHangup(ctx, srv, log)
	if err := srv.Start(ctx); err != nil {
		return err
	}
	if generated != nil {
		// After Start, so the printed commands name the real port.
		token, err := demoToken(generated.HMACSecret, time.Now())
		if err != nil {
			return err
		}
		// One write, so log lines cannot land inside the banner.
		exe, _ := os.Executable()
		_, _ = io.WriteString(cmd.ErrOrStderr(), firstRunBanner(*generated, token, srv.Addr(), cfg.Paths(), heraldCommand(exe, os.Args[0]), cfg.TLSEnabled()))
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-srv.Done():
		if err != nil {
			return fmt.Errorf("http server: %w", err)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Shutdown.Timeout)
	defer cancel()
	return srv.Shutdown(sctx)
}

func newLogger(w io.Writer, cfg config.LogConfig) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Level))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
