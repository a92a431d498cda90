package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
)

func benchSoakCommand() *cobra.Command {
	var (
		nodes            []string
		secret, apiKey   string
		duration, warmup time.Duration
		clients          int
		minLife, maxLife time.Duration
		channels         int
		prefix           string
		rate             float64
		every            time.Duration
		csvPath, pngPath string
		title            string
	)
	cmd := &cobra.Command{
		Use:   "soak",
		Short: "Churn clients against a cluster for a long time and check nothing grows or goes missing",
		Long: `Clients connect, subscribe with recovery to a history channel, receive for
--min-life to --max-life, close and connect again (to the next node, recovering
from where they left), while the server API publishes --rate publications/s to
the same channels. Every session's stream is checked (no gap, no duplicate,
recovery succeeds) and every node's RSS, goroutines and open files are sampled
from its /metrics. The exit status is 1 when anything failed or grew: the
means of the last third of the samples after --warmup against the first third
(RSS may grow 20% + 16 MiB, goroutines and open files 10% + 50).

--node takes http://host:port of each node (its /connection/websocket, /api
and /metrics are used); the channels' namespace must keep history and allow
recovery and client subscriptions.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(nodes) == 0 {
				return errors.New("--node is required (one per node)")
			}
			cfg := loadgen.SoakConfig{
				Secret: secret, APIKey: apiKey, Duration: duration, Warmup: warmup,
				Clients: clients, MinLife: minLife, MaxLife: maxLife,
				Channels: channels, Prefix: prefix, PubRate: rate, SampleEvery: every,
			}
			for _, n := range nodes {
				base := strings.TrimRight(n, "/")
				if !strings.HasPrefix(base, "http://") {
					return fmt.Errorf("--node %q: want http://host:port", n)
				}
				cfg.Nodes = append(cfg.Nodes, loadgen.SoakNode{
					WS:  "ws://" + strings.TrimPrefix(base, "http://") + "/connection/websocket",
					API: base + "/api", Metrics: base + "/metrics",
				})
			}
			out := cmd.OutOrStdout()
			cfg.OnSample = func(s loadgen.SoakSample) {
				fmt.Fprintf(out, "%7.0fs node %d: rss %.1f MiB, goroutines %.0f, open files %.0f, clients %.0f\n",
					s.At.Seconds(), s.Node, s.RSS/(1<<20), s.Goroutines, s.OpenFDs, s.Clients)
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			res, err := loadgen.RunSoak(ctx, cfg)
			if err != nil {
				return err
			}
			trends := loadgen.SoakTrends(res.Samples, warmup)
			fmt.Fprintln(out)
			loadgen.FormatSoak(out, res, trends)
			if csvPath != "" {
				if err := writeFileWith(csvPath, func(w io.Writer) error { return loadgen.WriteSoakCSV(w, res.Samples) }); err != nil {
					return err
				}
			}
			if pngPath != "" {
				if err := writeFileWith(pngPath, func(w io.Writer) error { return loadgen.WriteSoakPNG(w, title, res.Samples) }); err != nil {
					return err
				}
			}
			if !loadgen.SoakOK(res, trends) {
				return errors.New("soak failed: errors, or a gauge that grew (see above)")
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&nodes, "node", nil, "node base URL, http://host:port (repeat for each node)")
	fl.StringVar(&secret, "secret", "", "HMAC secret of connection tokens")
	fl.StringVar(&apiKey, "api-key", "", "server API key")
	fl.DurationVar(&duration, "duration", 30*time.Minute, "how long to churn")
	fl.DurationVar(&warmup, "warmup", time.Minute, "samples before this are left out of the trend")
	fl.IntVar(&clients, "clients", 200, "client slots")
	fl.DurationVar(&minLife, "min-life", 5*time.Second, "shortest session")
	fl.DurationVar(&maxLife, "max-life", 20*time.Second, "longest session")
	fl.IntVar(&channels, "channels", 20, "history channels")
	fl.StringVar(&prefix, "prefix", "soak:", "channel name prefix")
	fl.Float64Var(&rate, "rate", 100, "API publications per second")
	fl.DurationVar(&every, "sample", 10*time.Second, "sampling interval")
	fl.StringVar(&csvPath, "csv", "", "write the samples here")
	fl.StringVar(&pngPath, "png", "", "draw the samples here")
	fl.StringVar(&title, "title", "Soak: RSS, goroutines and open files per node", "chart title")
	return cmd
}
