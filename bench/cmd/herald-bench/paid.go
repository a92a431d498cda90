package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
)

func benchPaidCommand() *cobra.Command {
	var (
		cfg        loadgen.PaidConfig
		jsonOut    bool
		printRates bool
	)
	cmd := &cobra.Command{
		Use:   "paid",
		Short: "The connect cost of token revocation and user blocking, and get_user_status of many users",
		Long: `Loads --revoked revoked token ids (revoke_token) and --blocked blocked users
(block_user) through the server API (--api), in batches of --batch, none of
them the measured clients'; then makes --connects connects, --concurrency at a
time, each a fresh WebSocket connection (JSON) with a token of its own jti and
iat, closed once its connect is answered: prints connects per second and the
dial-to-reply latency (p50, p99). Then gives --status-users users a status
(update_user_status) and asks get_user_status for all of them at once
--status-rounds times: prints its latency (p50, p99). Run it once with
--revoked 0 --blocked 0 and once with many, each on a fresh node, to see what
the checks cost (bench/paid.sh).

--print-rate-limits prints the client.rate_limit of the rate-limit condition
(keys of the node's client section) and exits: limits on per connection and
per user that the measured traffic never reaches, so the connects pay the
checks alone. --rate-limits says the node runs with them: at the end a probe
calls two rpc methods that have a bucket of one twice each, and fails unless
the second calls are refused with error 111.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if printRates {
				_, err := fmt.Fprint(cmd.OutOrStdout(), loadgen.PaidRateLimitsYAML)
				return err
			}
			if cfg.URL == "" || cfg.APIURL == "" {
				return fmt.Errorf("--url and --api are required")
			}
			if cfg.StatusUsers > 1000 {
				return fmt.Errorf("--status-users %d: get_user_status takes at most 1000", cfg.StatusUsers)
			}
			cfg.APIURL = strings.TrimRight(cfg.APIURL, "/")
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			errOut := cmd.ErrOrStderr()
			res, err := loadgen.RunPaid(ctx, cfg, func(format string, a ...any) { fmt.Fprintf(errOut, format+"\n", a...) })
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if jsonOut {
				return writeJSON(out, map[string]any{"summary": res})
			}
			ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
			fmt.Fprintf(out, "loaded: %d revoked jtis, %d blocked users in %v\n", res.Revoked, res.Blocked, res.Load.Round(time.Millisecond))
			fmt.Fprintf(out, "connects: %d ok, %d failed, %.0f/s; latency p50 %s, p99 %s, max %s\n",
				res.Connected, res.Failed, res.Rate, ms(res.Connect.P50), ms(res.Connect.P99), ms(res.Connect.Max))
			if res.FirstError != "" {
				fmt.Fprintf(out, "first connect error: %s\n", res.FirstError)
			}
			if res.Status.Count > 0 {
				fmt.Fprintf(out, "get_user_status of %d users: %d calls, p50 %s, p99 %s, max %s\n",
					res.StatusUsers, res.Status.Count, ms(res.Status.P50), ms(res.Status.P99), ms(res.Status.Max))
			}
			if res.RateLimits {
				fmt.Fprintln(out, "rate limits: on (the probe over its limits was refused per connection and per user)")
			}
			if res.Failed > 0 {
				return fmt.Errorf("%d connects failed", res.Failed)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.URL, "url", "", "the WebSocket endpoint, e.g. ws://127.0.0.1:8000/connection/websocket")
	fs.StringVar(&cfg.APIURL, "api", "", "the server API, e.g. http://127.0.0.1:8000/api")
	fs.StringVar(&cfg.APIKey, "api-key", "", "server API key")
	fs.StringVar(&cfg.Secret, "secret", "", "HMAC secret of the connection tokens (HS256)")
	fs.IntVar(&cfg.Revoked, "revoked", 0, "revoked token ids to load before the connects")
	fs.IntVar(&cfg.Blocked, "blocked", 0, "blocked users to load before the connects")
	fs.IntVar(&cfg.Batch, "batch", 1000, "commands per API batch while loading (at most the server's http_api.max_batch_commands)")
	fs.IntVarP(&cfg.Connects, "connects", "n", 2000, "connects to make")
	fs.IntVar(&cfg.Concurrency, "concurrency", 16, "connects in flight")
	fs.IntVar(&cfg.StatusUsers, "status-users", 1000, "users of each get_user_status (at most 1000; 0: skip)")
	fs.IntVar(&cfg.StatusRounds, "status-rounds", 100, "get_user_status calls to time")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "bound of each connect and API call")
	fs.BoolVar(&cfg.RateLimits, "rate-limits", false, "the node runs with the limits of --print-rate-limits: probe that they are on")
	fs.BoolVar(&printRates, "print-rate-limits", false, "print the node's client.rate_limit for --rate-limits (YAML, keys of the client section) and exit")
	fs.BoolVar(&jsonOut, "json", false, "print the result as JSON")
	return cmd
}
