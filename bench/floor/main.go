package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	var cfg Config
	flag.StringVar(&cfg.Addr, "addr", "127.0.0.1:18300", "WebSocket listener")
	flag.StringVar(&cfg.APIAddr, "api-addr", "127.0.0.1:18301", "server API listener (/api/publish, /api/batch, /stats, /healthz)")
	flag.StringVar(&cfg.Upgrade, "upgrade", "raw", "handshake: raw (ws.Upgrader on the socket) or http (net/http + ws.HTTPUpgrader, as Herald)")
	flag.IntVar(&cfg.Writers, "writers", 1, "writer goroutines per channel, each with its share of the subscribers")
	flag.BoolVar(&cfg.Bare, "bare", false, "answer the first frame with canned connect/subscribe replies and nothing else (connection-rate floor)")
	flag.StringVar(&cfg.Secret, "secret", "", "verify connect tokens with this HMAC secret (empty: no check)")
	flag.StringVar(&cfg.APIKey, "api-key", "", "require this server API key (empty: none)")
	flag.DurationVar(&cfg.WriteTimeout, "write-timeout", 0, "set a write deadline before each write, as Herald does (0: none)")
	flag.IntVar(&cfg.MaxPending, "max-pending", 64<<20, "bytes a writer may have pending per format before publications are refused")
	flag.DurationVar(&cfg.RoundInterval, "round-interval", 0, "least time between the starts of a writer's rounds: what arrives sooner waits and goes out together, as with write coalescing at a fixed interval (0: a round as soon as something is pending)")
	flag.StringVar(&cfg.RedisAddr, "redis", "", "relay publications through the Redis at this host:port: the API publishes into Redis, subscribers get what Redis sends (two floors on one Redis are a two-node deployment's floor)")
	flag.StringVar(&cfg.RedisPrefix, "redis-prefix", "floor.", "prefix of the Redis channels (with -redis)")
	debug := flag.Bool("debug", false, "log every connection error")
	flag.Parse()
	level := slog.LevelInfo
	if *debug {
		level = slog.LevelDebug
	}
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "floor: unexpected arguments:", flag.Args())
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	s, err := Start(cfg, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	log.Info("floor listening", "ws", s.Addr(), "api", s.APIAddr(), "upgrade", cfg.Upgrade,
		"writers", cfg.Writers, "bare", cfg.Bare, "verify_token", cfg.Secret != "", "redis", cfg.RedisAddr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	st := s.Stats()
	if err := s.Close(); err != nil {
		log.Warn("close", "error", err)
	}
	// The counters at exit, one JSON line on stdout, for the results.
	_ = json.NewEncoder(os.Stdout).Encode(st)
}
