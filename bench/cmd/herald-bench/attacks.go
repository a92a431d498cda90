package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/protocol"
)

// attackFlags are the flags of `herald-bench attacks`.
type attackFlags struct {
	cfg       loadgen.AttackConfig
	format    string
	rssMiB    int
	metrics   string
	report    string
	jsonOut   bool
	serverPID int
}

func benchAttacksCommand() *cobra.Command {
	var f attackFlags
	cmd := &cobra.Command{
		Use:   "attacks",
		Short: "Replay one of issue 35's attacks on a node and measure a fresh client meanwhile",
		Long: `Replays one attack (--attack) against one node for --duration:
  grpc-partial  --grpc-conns connections to the gRPC API (--grpc) with --grpc-streams
                streams each, no API key, each declaring a --grpc-message message to
                CentrifugoApi/Publish and sending all of it but its last byte
  noread        --clients WebSocket clients (receive buffer --rcvbuf) subscribe to
                --channel recovering its whole history, ask history --history-pull,
                then read nothing (--prefill publications of --prefill-payload bytes
                go there first)
  mapkeys       one client sets distinct keys of --map-value bytes in the map channel
                --channel, --map-in-flight publishes at a time, as fast as it is answered
  history-http  server API history with limit -1 on --channel over HTTP, --concurrency
                at a time (--prefill fills it first)
  history-grpc  the same over the gRPC API (--grpc)
Meanwhile a fresh client connects every --probe-interval, subscribes to
--probe-channel and waits for one publication there (p50/p99/max of each step,
each bounded by --probe-timeout); a history subscriber follows --ledger-channel
while --ledger-rate numbered publications a second go there, and then counts
what came twice or never (--grace to catch up); the node's RSS (--server-pid)
is sampled every 100 ms. The verdict holds it to --latency-limit and
--rss-growth-limit. Prints a Markdown table (--json: a JSON line, which
--report turns back into the table with the rows of other runs).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if f.report != "" {
				return writeAttacksReport(out, f.report)
			}
			cfg, err := f.config()
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			errOut := cmd.ErrOrStderr()
			res, runErr := loadgen.RunAttack(ctx, cfg, func(s string) { fmt.Fprintln(errOut, s) })
			if runErr != nil && res.Verdict == "" {
				return runErr
			}
			if f.jsonOut {
				if err := writeJSON(out, res); err != nil {
					return err
				}
			} else if err := loadgen.WriteAttacksMarkdown(out, []loadgen.AttackResult{res}); err != nil {
				return err
			}
			return runErr
		},
	}
	f.register(cmd)
	return cmd
}

func (f *attackFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	c := &f.cfg
	fs.StringVar(&c.Kind, "attack", "", "the attack: "+strings.Join(loadgen.AttackKinds, ", "))
	fs.StringVar(&c.Label, "label", "", "the attack's name in the report (default: --attack)")
	fs.StringVar(&c.URL, "url", "ws://127.0.0.1:8000/connection/websocket", "the node's WebSocket URL")
	fs.StringVar(&c.APIURL, "api", "http://127.0.0.1:8000/api", "the node's HTTP server API")
	fs.StringVar(&c.APIKey, "api-key", "", "server API key (HTTP and gRPC)")
	fs.StringVar(&c.GRPCAddr, "grpc", "", "the node's gRPC API, host:port")
	fs.StringVar(&c.Secret, "secret", "", "HMAC secret to mint connection tokens (empty: connect without a token)")
	fs.StringVar(&f.format, "format", "json", "client protocol encoding: json or protobuf")
	fs.IntVar(&f.serverPID, "server-pid", 0, "the node's process id (its RSS)")
	fs.StringVar(&f.metrics, "metrics", "", "the node's Prometheus endpoint, for the closes by code (default: /metrics of --url's host; \"-\": none)")
	fs.DurationVar(&c.Duration, "duration", 30*time.Second, "how long the attack lasts")
	fs.StringVar(&c.ProbeChannel, "probe-channel", "probe", "the channel the fresh clients subscribe to")
	fs.DurationVar(&c.ProbeInterval, "probe-interval", 200*time.Millisecond, "a fresh client this often")
	fs.DurationVar(&c.ProbeTimeout, "probe-timeout", 5*time.Second, "longest a fresh client's connect, subscribe and delivery may take together")
	fs.StringVar(&c.LedgerChannel, "ledger-channel", "ledger:attacks", "the history subscriber's channel (history and recovery on)")
	fs.Float64Var(&c.LedgerRate, "ledger-rate", 20, "numbered publications a second to --ledger-channel during the attack")
	fs.DurationVar(&c.Grace, "grace", 10*time.Second, "after the attack, wait at most this long for the history subscriber to catch up")
	fs.DurationVar(&c.LatencyLimit, "latency-limit", 100*time.Millisecond, "target: most a fresh client's connect, subscribe or delivery may take")
	fs.IntVar(&f.rssMiB, "rss-growth-limit", 256, "target: most MiB the node's RSS may grow over its level before the attack")
	fs.StringVar(&c.Channel, "channel", "", "the attacked channel (noread, mapkeys, history-*)")
	fs.IntVar(&c.Prefill, "prefill", 0, "publications put into --channel before the attack")
	fs.IntVar(&c.PrefillPayload, "prefill-payload", 60<<10, "bytes of each --prefill publication")
	fs.IntVar(&c.GRPCConns, "grpc-conns", 4, "grpc-partial: connections")
	fs.IntVar(&c.GRPCStreams, "grpc-streams", 50, "grpc-partial: streams per connection")
	fs.IntVar(&c.GRPCMessage, "grpc-message", 4<<20, "grpc-partial: the declared message size in bytes")
	fs.IntVar(&c.Clients, "clients", 200, "noread: clients")
	fs.IntVar(&c.HistoryPull, "history-pull", 100, "noread: the history limit each client asks for")
	fs.IntVar(&c.RcvBuf, "rcvbuf", 4096, "noread: each client's socket receive buffer in bytes (0: the system's)")
	fs.IntVar(&c.MapValue, "map-value", 1024, "mapkeys: bytes of each value")
	fs.IntVar(&c.MapInFlight, "map-in-flight", 64, "mapkeys: publishes awaiting their reply at once")
	fs.IntVar(&c.Concurrency, "concurrency", 4, "history-*: calls at once")
	fs.BoolVar(&f.jsonOut, "json", false, "machine-readable output: one JSON line")
	fs.StringVar(&f.report, "report", "", "print the table of the JSON lines in this file (of runs with --json) instead of attacking")
}

// config checks the flags and completes the attack's configuration.
func (f *attackFlags) config() (loadgen.AttackConfig, error) {
	c := f.cfg
	if !slices.Contains(loadgen.AttackKinds, c.Kind) {
		return c, fmt.Errorf("--attack %q: want one of %s", c.Kind, strings.Join(loadgen.AttackKinds, ", "))
	}
	switch f.format {
	case "json":
		c.Format = protocol.TypeJSON
	case "protobuf":
		c.Format = protocol.TypeProtobuf
	default:
		return c, fmt.Errorf("--format %q: want json or protobuf", f.format)
	}
	if f.serverPID <= 0 {
		return c, fmt.Errorf("give --server-pid, the node whose RSS is measured")
	}
	c.ServerPID = f.serverPID
	if c.Duration <= 0 || c.ProbeInterval <= 0 || c.ProbeTimeout <= 0 || c.LedgerRate <= 0 {
		return c, fmt.Errorf("--duration, --probe-interval, --probe-timeout and --ledger-rate must be positive")
	}
	if f.rssMiB < 0 {
		return c, fmt.Errorf("--rss-growth-limit %d: want 0 (none) or more", f.rssMiB)
	}
	c.RSSGrowthLimit = int64(f.rssMiB) << 20
	needs := map[string][]string{
		loadgen.AttackGRPCPartial: {"grpc"},
		loadgen.AttackNoRead:      {"channel"},
		loadgen.AttackMapKeys:     {"channel"},
		loadgen.AttackHistoryHTTP: {"channel"},
		loadgen.AttackHistoryGRPC: {"channel", "grpc"},
	}
	for _, name := range needs[c.Kind] {
		if (name == "grpc" && c.GRPCAddr == "") || (name == "channel" && c.Channel == "") {
			return c, fmt.Errorf("--attack %s: give --%s", c.Kind, name)
		}
	}
	c.APIURL = strings.TrimRight(c.APIURL, "/")
	switch f.metrics {
	case "-":
	case "":
		u, err := url.Parse(c.URL)
		if err != nil {
			return c, fmt.Errorf("--url: %w", err)
		}
		c.Metrics = "http://" + u.Host + "/metrics"
	default:
		c.Metrics = f.metrics
	}
	return c, nil
}

// writeAttacksReport prints the table of the JSON lines in path.
func writeAttacksReport(out io.Writer, path string) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	rows, err := loadgen.ReadAttackResults(file)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return loadgen.WriteAttacksMarkdown(out, rows)
}
