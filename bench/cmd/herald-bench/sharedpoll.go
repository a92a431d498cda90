package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
)

func benchSharedPollCommand() *cobra.Command {
	var (
		f        clientFlags
		cfg      loadgen.SharedPollConfig
		track    loadgen.TrackConfig
		connRate float64
	)
	cmd := &cobra.Command{
		Use:   "sharedpoll",
		Short: "Shared poll at scale: backend calls per interval, and the time from a version change to the last client",
		Long: `Serves a shared poll refresh backend on --backend (point the server's proxy
at http://BACKEND/), opens --connections clients in this process that subscribe
to --channel (a shared_poll namespace in the versioned mode) and track
--keys-per-conn of --keys keys each (k0, k1, ...; signed with --poll-secret),
counts the backend's refresh calls for --measure, then raises every key's
version and waits for each tracking client to get it. This process holds at
most the open-files limit of connections: run several for more (each with its
own --backend and --user-prefix, and one proxy per backend).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pc, err := f.pool()
			if err != nil {
				return err
			}
			pc.Track = &track
			cfg.Pool, cfg.ConnectRate, cfg.DialConcurrency = pc, connRate, f.dialConc
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			errOut := cmd.ErrOrStderr()
			res, err := loadgen.RunSharedPoll(ctx, cfg, func(format string, a ...any) { fmt.Fprintf(errOut, format+"\n", a...) })
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if f.jsonOut {
				return writeJSON(out, map[string]any{"summary": res})
			}
			ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
			fmt.Fprintf(out, "connections: %d tracking (%d failed), set up in %v\n", res.Connected, res.Failed, res.Ramp.Round(time.Millisecond))
			fmt.Fprintf(out, "backend: %.1f refresh calls per %v, %.0f keys per call, %d keys tracked\n", res.CallsPerInterval, cfg.Interval, res.KeysPerCall, res.Keys)
			fmt.Fprintf(out, "version change: %d of %d tracked keys got it; from the server's first poll of it: p50 %s, p99 %s, last %s; from the change at the backend: last %s\n",
				res.Received, res.Expected, ms(res.Latency.P50), ms(res.Latency.P99), ms(res.ToLast), ms(res.FromRaise))
			return nil
		},
	}
	fs := cmd.Flags()
	f.register(fs)
	fs.IntVarP(&cfg.Connections, "connections", "n", 1000, "tracking connections (at most the open-files limit of one process)")
	fs.Float64Var(&connRate, "connect-rate", 2000, "connections per second while setting up (0: as fast as possible)")
	fs.StringVar(&cfg.Channel, "channel", "poll:bench", "the shared poll channel")
	fs.StringVar(&cfg.Backend, "backend", "127.0.0.1:18390", "listen address of the refresh backend")
	fs.DurationVar(&cfg.Interval, "interval", time.Second, "the server's shared_poll.refresh_interval (to count calls per interval)")
	fs.DurationVar(&cfg.Measure, "measure", 5*time.Second, "count the backend's calls this long before the change")
	fs.DurationVar(&cfg.Wait, "wait", 30*time.Second, "wait at most this long for the change to reach every client")
	fs.IntVar(&track.Keys, "keys", 1000, "distinct keys")
	fs.IntVar(&track.PerConn, "keys-per-conn", 1, "keys each connection tracks")
	fs.StringVar(&track.Secret, "poll-secret", "", "shared_poll.hmac_secret_key of the server")
	return cmd
}
