package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
)

func benchMapsCommand() *cobra.Command {
	var (
		f        clientFlags
		keys     string
		rates    string
		cfg      loadgen.MapsConfig
		pageSize int
	)
	cmd := &cobra.Command{
		Use:   "maps",
		Short: "Fill map channels, read their snapshot, and measure update latency",
		Long: `For each size of --keys, on its own channel (--channel plus the size, in a
namespace of subscription_type map):
  fill     set every key through the server API (--api): batches of --batch
           map_publish commands (--parallel), --fill-concurrency in flight; the servers'
           RSS (--server-pid) and the engine store's size (--store-cmd) before
           and after
  snapshot one fresh subscriber reads every state page (--page-size, the
           namespace's map.max_page_size) and the stream, up to the live reply
  late     with --late, that many fresh subscribers read the whole snapshot
           at once: how many got every key, the time until the last was
           live, p50/p99 of each one's time, the servers' CPU meanwhile
  updates  --subscribers go live, then map_publish to random keys at each rate
           of --rate in turn, --step each, until a step is not served (an
           update missing or failed, under 95% of the rate achieved, or the
           first copy's p99 above --p99-limit); p50/p99/max publish-to-receive
           of the first copy of each update, from its intended send time
Prints a Markdown table (--json: JSON lines).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pc, err := f.pool()
			if err != nil {
				return err
			}
			if cfg.Keys, err = loadgen.ParseKeys(keys); err != nil {
				return err
			}
			steps, err := loadgen.ParseRates(rates, cfg.Step, false)
			if err != nil {
				return fmt.Errorf("--rate: %w", err)
			}
			cfg.Rates = nil
			for _, s := range steps {
				cfg.Rates = append(cfg.Rates, s.Rate)
			}
			t, err := mapTargetFlags(pc, cfg.APIURL, pageSize, "the maps are filled through")
			if err != nil {
				return err
			}
			cfg.URL, cfg.Format, cfg.Secret, cfg.APIURL, cfg.PageSize = t.url, pc.Format, pc.Secret, t.api, t.pageSize
			cfg.ServerPIDs = f.pids
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			res, runErr := loadgen.RunMaps(ctx, cfg, func(s string) { fmt.Fprintln(errOut, s) })
			if f.jsonOut {
				for _, r := range res {
					if err := writeJSON(out, r); err != nil {
						return err
					}
				}
			} else if err := loadgen.WriteMapsMarkdown(out, res); err != nil {
				return err
			}
			for _, r := range res {
				for _, u := range r.Updates {
					if u.Stopped != "" {
						fmt.Fprintf(errOut, "%d keys, %.0f updates/s: stopped early: %s\n", r.Keys, u.Rate, u.Stopped)
					}
				}
			}
			return runErr
		},
	}
	fs := cmd.Flags()
	// Of the client flags, those one client at a time uses.
	fs.StringSliceVar(&f.urls, "url", []string{"ws://127.0.0.1:8000/connection/websocket"}, "the target WebSocket URL")
	fs.StringVar(&f.secret, "secret", "", "HMAC secret to mint connection tokens (empty: connect without a token)")
	fs.StringVarP(&f.configPath, "config", "c", "", "read the HMAC secret from this Herald configuration file")
	fs.StringVar(&f.format, "format", "json", "client protocol encoding: json or protobuf")
	fs.IntSliceVar(&f.pids, "server-pid", nil, "server process ids whose RSS is read before and after each fill (repeat or comma-separate)")
	fs.BoolVar(&f.jsonOut, "json", false, "machine-readable output: one JSON line per map size")
	fs.StringVar(&keys, "keys", "10000,1000000", "map sizes, comma-separated (1e6 is accepted)")
	fs.StringVar(&cfg.Channel, "channel", "maps:bench", "channel prefix in a map namespace; each size adds its number")
	fs.StringVar(&cfg.APIURL, "api", "", "the server API, e.g. http://127.0.0.1:8000/api")
	fs.StringVar(&cfg.APIKey, "api-key", "", "server API key")
	fs.IntVar(&cfg.Payload, "payload", 64, "bytes of each value (a JSON object)")
	fs.IntVar(&cfg.Batch, "batch", 500, "map_publish commands per API batch while filling")
	fs.BoolVar(&cfg.Parallel, "parallel", true, "fill batches are parallel batches (the server runs their commands concurrently)")
	fs.IntVar(&cfg.FillConc, "fill-concurrency", 4, "API batches in flight while filling")
	fs.IntVar(&pageSize, "page-size", 1000, "state and stream page size (the namespace's map.max_page_size)")
	fs.IntVar(&cfg.Late, "late", 0, "fresh subscribers that read the whole snapshot at once, after the first")
	fs.IntVar(&cfg.Subscribers, "subscribers", 10, "live subscribers during the updates")
	fs.StringVar(&rates, "rate", "200", "map_publish per second during the updates: a rate, rising rates comma-separated, or FROM:TO:BY (a step each)")
	fs.DurationVar(&cfg.Step, "step", 30*time.Second, "how long each rate's updates last")
	fs.DurationVar(&cfg.P99Limit, "p99-limit", 2*time.Second, "a step whose first-copy p99 is above it is not served, and ends the sweep (0: no limit)")
	fs.IntVar(&cfg.APIConns, "api-conns", 8, "map_publish calls in flight during the updates")
	fs.DurationVar(&cfg.Grace, "grace", 2*time.Second, "wait at most this long after the last update for late copies")
	fs.DurationVar(&cfg.MaxLag, "max-lag", 10*time.Second, "stop the updates when the publisher falls this far behind")
	fs.DurationVar(&cfg.FillTimeout, "fill-timeout", time.Hour, "give up a fill after this long")
	fs.DurationVar(&cfg.SnapshotTimeout, "snapshot-timeout", 10*time.Minute, "give up a snapshot read (or a live subscriber's setup) after this long")
	fs.StringVar(&cfg.StoreCmd, "store-cmd", "", "shell command printing the engine store's size in bytes, run before and after each fill")
	return cmd
}

// mapTarget is what a map benchmark's flags name: the one WebSocket URL
// its subscribers dial, the server API it sets keys through, and the state
// page size.
type mapTarget struct {
	url, api string
	pageSize int32
}

// mapTargetFlags checks the flags every map benchmark shares (--url,
// --api, --page-size); what says what the API is used for, in the error.
func mapTargetFlags(pc loadgen.PoolConfig, apiURL string, pageSize int, what string) (mapTarget, error) {
	if len(pc.URLs) != 1 {
		return mapTarget{}, fmt.Errorf("--url: want one URL, got %d", len(pc.URLs))
	}
	if apiURL == "" {
		return mapTarget{}, fmt.Errorf("give --api, the server API %s", what)
	}
	if pageSize < 1 || pageSize > 1<<20 {
		return mapTarget{}, fmt.Errorf("--page-size %d: want 1 to %d", pageSize, 1<<20)
	}
	return mapTarget{url: pc.URLs[0], api: strings.TrimRight(apiURL, "/"), pageSize: int32(pageSize)}, nil
}
