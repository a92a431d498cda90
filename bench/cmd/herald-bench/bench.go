package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/protocol"
)

// newRoot is `herald-bench`: the load and latency tool.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "herald-bench",
		Short: "Load and latency tool for Herald or any Centrifugo-protocol server",
		Long: `herald-bench drives a server that speaks the Centrifugo client protocol:
  conns       open and hold many connections, and measure the server's memory per connection
  latency     publish at stepped rates and measure publish-to-receive latency
  throughput  find the highest rate at which a p99 latency still holds
  overload    overload past capacity; check no reading client is closed and the server recovers
  maps        fill map channels, read their snapshot, and measure update latency
  attacks     replay one of issue 35's attacks and measure a fresh client meanwhile

Connections are spread over worker processes (this binary re-executed), each
under the open-files limit, over several target URLs and over several local
source addresses (127.0.0.x), so one machine can hold hundreds of thousands.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(benchConnsCommand(), benchLatencyCommand(), benchThroughputCommand(), benchOverloadCommand(), benchSoakCommand(), benchWorkerCommand(), benchShardChannelCommand(), benchMapsCommand(), benchMapExpiryCommand(), benchSharedPollCommand(), benchTagsCommand(), benchAttacksCommand(), benchPaidCommand())
	return root
}

// benchWorkerCommand is the worker process: it speaks JSON lines on
// stdin/stdout with the coordinator.
func benchWorkerCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "worker",
		Short:  "Internal: one worker process of herald-bench",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The coordinator stops the workers through their stdin; a
			// terminal's Ctrl-C is its business.
			signal.Ignore(syscall.SIGINT)
			return loadgen.RunWorker(cmd.Context(), os.Stdin, os.Stdout)
		},
	}
}

// clientFlags are the flags shared by the commands that open client
// connections.
type clientFlags struct {
	urls       []string
	sources    string
	secret     string
	configPath string
	format     string
	client     string
	userPrefix string
	workers    int
	perWorker  int
	dialConc   int
	pids       []int
	jsonOut    bool
}

func (f *clientFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.urls, "url", []string{"ws://127.0.0.1:8000/connection/websocket"}, "target WebSocket URLs (repeat or comma-separate); connections go round-robin")
	fs.StringVar(&f.sources, "source", "", "local source addresses, e.g. 127.0.0.1-127.0.0.20 (each adds ~28,000 ephemeral ports)")
	fs.StringVar(&f.secret, "secret", "", "HMAC secret to mint connection tokens (empty: connect without a token)")
	fs.StringVarP(&f.configPath, "config", "c", "", "read the HMAC secret from this Herald configuration file")
	fs.StringVar(&f.format, "format", "json", "client protocol encoding: json or protobuf")
	fs.StringVar(&f.client, "client", loadgen.ClientLight, "how subscribers read: light (one epoll reader per core, publications parsed in place), "+
		"heavy (a goroutine per connection, every message fully decoded into structs, as real clients do) or sdk (the centrifuge-go SDK, one client per connection)")
	fs.StringVar(&f.userPrefix, "user-prefix", "bench-", "user ids are this prefix plus the connection number")
	fs.IntVar(&f.workers, "workers", 0, "worker processes (0: as many as --per-worker needs)")
	fs.IntVar(&f.perWorker, "per-worker", loadgen.DefaultPerWorker, "most connections per worker process (bounded by the open-files hard limit)")
	fs.IntVar(&f.dialConc, "dial-concurrency", 64, "connections being set up at once, per worker")
	fs.IntSliceVar(&f.pids, "server-pid", nil, "server process ids to sample (CPU, RSS) every second (repeat or comma-separate)")
	fs.BoolVar(&f.jsonOut, "json", false, "machine-readable output: JSON lines")
}

func (f *clientFlags) pool() (loadgen.PoolConfig, error) {
	var pc loadgen.PoolConfig
	secret := f.secret
	if secret == "" && f.configPath != "" {
		cfg, err := config.Load(f.configPath)
		if err != nil {
			return pc, err
		}
		secret = cfg.Client.Token.HMACSecretKey
	}
	var format protocol.Type
	switch f.format {
	case "json":
		format = protocol.TypeJSON
	case "protobuf":
		format = protocol.TypeProtobuf
	default:
		return pc, fmt.Errorf("--format %q: want json or protobuf", f.format)
	}
	sources, err := loadgen.ParseSources(f.sources)
	if err != nil {
		return pc, err
	}
	client, err := loadgen.ParseClientKind(f.client)
	if err != nil {
		return pc, err
	}
	return loadgen.PoolConfig{URLs: f.urls, Sources: sources, Format: format, Secret: secret, UserPrefix: f.userPrefix, Client: client}, nil
}

// launcher re-executes this binary as `herald-bench worker`.
func launcher() (loadgen.Launcher, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this executable to start workers: %w", err)
	}
	return loadgen.ExecLauncher{Path: exe, Args: []string{"worker"}}, nil
}

// interruptible is ctx cancelled by SIGINT or SIGTERM.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// writeJSON writes v as one JSON line.
func writeJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}

// writeFileWith creates path and writes it with fn.
func writeFileWith(path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// rigFlags are the flags of commands that run a latency rig.
type rigFlags struct {
	clientFlags
	subscribers int
	connectRate float64
	channel     string
	payload     int
	apiURL      string
	apiKey      string
	apiConns    int
	batch       int
	publishURL  string
	warmup      time.Duration
	grace       time.Duration
	maxLag      time.Duration
}

func (f *rigFlags) register(fs *pflag.FlagSet) {
	f.clientFlags.register(fs)
	fs.IntVar(&f.subscribers, "subscribers", 500, "subscribers of the channel, spread over --url")
	fs.Float64Var(&f.connectRate, "connect-rate", 2000, "subscriber connections per second while setting up")
	fs.StringVar(&f.channel, "channel", "bench", "the channel")
	fs.IntVar(&f.payload, "payload", 128, "publication data size in bytes")
	fs.StringVar(&f.apiURL, "api", "", "publish through this server API, e.g. http://127.0.0.1:8000/api")
	fs.StringVar(&f.apiKey, "api-key", "", "server API key")
	fs.IntVar(&f.apiConns, "api-conns", 8, "concurrent publishers (HTTP keep-alive connections)")
	fs.IntVar(&f.batch, "batch", 1, "publications per API request at most (>1 uses the batch method for what is due)")
	fs.StringVar(&f.publishURL, "publish-url", "", "publish through a client connection to this WebSocket URL instead of the API")
	fs.DurationVar(&f.warmup, "warmup", 5*time.Second, "run the first rate this long first, unmeasured")
	fs.DurationVar(&f.grace, "grace", 2*time.Second, "wait this long after a step for late copies; later ones count as missing")
	fs.DurationVar(&f.maxLag, "max-lag", 10*time.Second, "stop when the publisher falls this far behind its schedule")
}

func (f *rigFlags) config() (loadgen.LatencyConfig, error) {
	pc, err := f.pool()
	if err != nil {
		return loadgen.LatencyConfig{}, err
	}
	if f.apiURL == "" && f.publishURL == "" {
		return loadgen.LatencyConfig{}, errors.New("give --api (server API) or --publish-url (client connection) for the publisher")
	}
	l, err := launcher()
	if err != nil {
		return loadgen.LatencyConfig{}, err
	}
	return loadgen.LatencyConfig{
		Pool: pc, Subscribers: f.subscribers, Workers: f.workers, PerWorker: f.perWorker, ConnectRate: f.connectRate,
		DialConcurrency: f.dialConc, Channel: f.channel, PayloadSize: f.payload,
		APIURL: strings.TrimRight(f.apiURL, "/"), APIKey: f.apiKey, APIConns: f.apiConns, Batch: f.batch, ClientURL: f.publishURL,
		Warmup: f.warmup, Grace: f.grace, MaxLag: f.maxLag, ServerPIDs: f.pids, Launcher: l,
	}, nil
}
