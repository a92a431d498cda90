package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
)

func benchTagsCommand() *cobra.Command {
	var (
		f   clientFlags
		cfg loadgen.TagsConfig
	)
	cmd := &cobra.Command{
		Use:   "tags",
		Short: "Tags filters at scale: delivery to subscribers with distinct filters",
		Long: `Opens --subscribers clients in this process on --channel (a namespace with
allow_tags_filter), client i subscribed with the filter {key: "f", cmp: "eq",
val: "v<i mod --filters>"}, then publishes through the server API (--api) at
--rate for --step, publication j with the tag f = "v<j mod --filters>". Each
publication must reach exactly the subscribers of its filter: prints the copies
expected, received and wrongly delivered, publish-to-receive latency, and the
servers' CPU (--server-pid) and this process's while publishing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pc, err := f.pool()
			if err != nil {
				return err
			}
			cfg.Pool, cfg.DialConcurrency, cfg.ServerPIDs = pc, f.dialConc, f.pids
			cfg.APIURL = strings.TrimRight(cfg.APIURL, "/")
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			errOut := cmd.ErrOrStderr()
			res, err := loadgen.RunTags(ctx, cfg, func(format string, a ...any) { fmt.Fprintf(errOut, format+"\n", a...) })
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if f.jsonOut {
				return writeJSON(out, map[string]any{"summary": res})
			}
			ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
			fmt.Fprintf(out, "subscribers: %d connected (%d failed) in %v, %d distinct filters\n", res.Connected, res.Failed, res.Ramp.Round(time.Millisecond), cfg.Filters)
			fmt.Fprintf(out, "publications: %d sent, %d failed, %.0f/s achieved\n", res.Sent, res.PublishErrs, res.Achieved)
			fmt.Fprintf(out, "copies: %d of %d expected received, %d wrong; latency p50 %s, p99 %s, max %s\n",
				res.Received, res.Expected, res.Wrong, ms(res.Latency.P50), ms(res.Latency.P99), ms(res.Latency.Max))
			fmt.Fprintf(out, "cpu while publishing: server %.0f%%, bench %.0f%%\n", res.ServerCPU, res.BenchCPU)
			return nil
		},
	}
	fs := cmd.Flags()
	f.register(fs)
	fs.IntVar(&cfg.Subscribers, "subscribers", 1000, "subscribers (at most the open-files limit of one process)")
	fs.IntVar(&cfg.Filters, "filters", 1000, "distinct filters among the subscribers")
	fs.Float64Var(&cfg.ConnectRate, "connect-rate", 2000, "connections per second while setting up (0: as fast as possible)")
	fs.StringVar(&cfg.Channel, "channel", "tags:bench", "the channel, in a namespace with allow_tags_filter")
	fs.StringVar(&cfg.APIURL, "api", "", "the server API, e.g. http://127.0.0.1:8000/api")
	fs.StringVar(&cfg.APIKey, "api-key", "", "server API key")
	fs.IntVar(&cfg.APIConns, "api-conns", 8, "publications in flight")
	fs.Float64Var(&cfg.Rate, "rate", 1000, "publications per second")
	fs.DurationVar(&cfg.Step, "step", 10*time.Second, "how long to publish")
	fs.IntVar(&cfg.Payload, "payload", 128, "publication data size in bytes")
	fs.DurationVar(&cfg.Grace, "grace", 5*time.Second, "wait at most this long for the last copies")
	return cmd
}
