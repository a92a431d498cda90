package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
)

func benchMapExpiryCommand() *cobra.Command {
	var (
		f        clientFlags
		cfg      loadgen.MapExpiryConfig
		pageSize int
	)
	cmd := &cobra.Command{
		Use:   "map-expiry",
		Short: "Set map keys that expire and time their removals at a live subscriber",
		Long: `One client subscribes to --channel (in a namespace of subscription_type map
whose map.key_ttl is --key-ttl), then --keys keys are set through the server
API (--api): batches of --batch map_publish commands, --fill-concurrency in
flight, no key published again. Each removal the subscriber receives is timed
after its key's expiry, counted from when its batch was sent plus --key-ttl
(the server set the expiry no earlier, so the real lag is at most this) and
from when it was answered (at least this): p50/p99/max of each, and how many
removals did not arrive within --wait of the last expiry. Smaller batches
bring the two closer. Prints a Markdown table (--json: one JSON line).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pc, err := f.pool()
			if err != nil {
				return err
			}
			t, err := mapTargetFlags(pc, cfg.APIURL, pageSize, "the keys are set through")
			if err != nil {
				return err
			}
			cfg.URL, cfg.Format, cfg.Secret, cfg.APIURL, cfg.PageSize = t.url, pc.Format, pc.Secret, t.api, t.pageSize
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			res, runErr := loadgen.RunMapExpiry(ctx, cfg)
			if runErr == nil && res.Missing > 0 {
				runErr = fmt.Errorf("%d of %d removals did not arrive within %s of the last expiry", res.Missing, res.Keys, cfg.Wait)
			}
			out := cmd.OutOrStdout()
			if f.jsonOut {
				if err := writeJSON(out, res); err != nil {
					return err
				}
			} else if err := loadgen.WriteMapExpiryMarkdown(out, res); err != nil {
				return err
			}
			return runErr
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVar(&f.urls, "url", []string{"ws://127.0.0.1:8000/connection/websocket"}, "the target WebSocket URL")
	fs.StringVar(&f.secret, "secret", "", "HMAC secret to mint connection tokens (empty: connect without a token)")
	fs.StringVarP(&f.configPath, "config", "c", "", "read the HMAC secret from this Herald configuration file")
	fs.StringVar(&f.format, "format", "json", "client protocol encoding: json or protobuf")
	fs.BoolVar(&f.jsonOut, "json", false, "machine-readable output: one JSON line")
	fs.StringVar(&cfg.Channel, "channel", "maps:expiry", "a channel of a map namespace with a key_ttl")
	fs.StringVar(&cfg.APIURL, "api", "", "the server API, e.g. http://127.0.0.1:8000/api")
	fs.StringVar(&cfg.APIKey, "api-key", "", "server API key")
	fs.IntVar(&cfg.Keys, "keys", 30000, "keys to set")
	fs.DurationVar(&cfg.KeyTTL, "key-ttl", 3*time.Second, "the namespace's map.key_ttl")
	fs.IntVar(&cfg.Payload, "payload", 64, "bytes of each value (a JSON object)")
	fs.IntVar(&cfg.Batch, "batch", 500, "map_publish commands per API batch")
	fs.IntVar(&cfg.FillConc, "fill-concurrency", 4, "API batches in flight")
	fs.IntVar(&pageSize, "page-size", 100, "the subscriber's state page size (at most the namespace's map.max_page_size)")
	fs.DurationVar(&cfg.Wait, "wait", 30*time.Second, "wait at most this long after the last expiry for removals")
	return cmd
}
