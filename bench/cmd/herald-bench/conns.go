package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/heraldhq/herald/bench/loadgen"
)

func benchConnsCommand() *cobra.Command {
	var (
		f             clientFlags
		n             int
		rate          float64
		channels      int
		channelPrefix string
		hold, settle  time.Duration
		timeout       time.Duration
	)
	cmd := &cobra.Command{
		Use:   "conns",
		Short: "Open and hold N connections; report the server's memory per connection",
		Long: `Open N connections at --rate per second (each connects with a JWT and
subscribes to --channels channels), hold them for --hold (0: until Ctrl-C),
then close them cleanly. One status line per second: elapsed, current, peak,
connected and disconnected in the last second, failed. With --server-pid, the
server's RSS per connection is (RSS at N - RSS before) / N, from /proc.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pc, err := f.pool()
			if err != nil {
				return err
			}
			for i := range channels {
				pc.Channels = append(pc.Channels, fmt.Sprintf("%s%d", channelPrefix, i))
			}
			l, err := launcher()
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			out := cmd.OutOrStdout()
			tty := !f.jsonOut && isTerminal(out)
			onStatus := func(s loadgen.Status) {
				switch {
				case f.jsonOut:
					_ = writeJSON(out, map[string]any{"status": s})
				case tty:
					fmt.Fprintf(out, "\r\x1b[K%s", loadgen.FormatProgress(s, 30))
				default:
					fmt.Fprintln(out, loadgen.FormatStatus(s))
				}
			}
			res, err := loadgen.RunConns(ctx, loadgen.ConnsConfig{
				Pool: pc, Connections: n, Rate: rate, Workers: f.workers, PerWorker: f.perWorker,
				DialConcurrency: f.dialConc, Hold: hold, Settle: settle, ServerPIDs: f.pids, Timeout: timeout, Launcher: l,
			}, onStatus)
			if tty {
				fmt.Fprintln(out)
			}
			if f.jsonOut {
				if werr := writeJSON(out, map[string]any{"summary": res}); werr != nil {
					return werr
				}
			} else {
				printConnsSummary(out, res)
			}
			return err
		},
	}
	fs := cmd.Flags()
	f.register(fs)
	fs.IntVarP(&n, "connections", "n", 1000, "connections to open")
	fs.Float64Var(&rate, "rate", 1000, "connections per second over all workers (0: as fast as possible)")
	fs.IntVar(&channels, "channels", 0, "channels each connection subscribes to (shared by all: PREFIX0..PREFIXk-1)")
	fs.StringVar(&channelPrefix, "channel-prefix", "bench", "channel name prefix")
	fs.DurationVar(&hold, "hold", 0, "hold the connections this long after the ramp (0: until interrupted)")
	fs.DurationVar(&settle, "settle", 5*time.Second, "wait this long after the ramp before sampling the server's memory at N")
	fs.DurationVar(&timeout, "timeout", 0, "bound the whole run (0: none)")
	return cmd
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func printConnsSummary(w io.Writer, r loadgen.ConnsResult) {
	fmt.Fprintf(w, "connections: target %d, peak %d, held %d, connected %d, failed %d, disconnected %d (%d workers)\n",
		r.Target, r.Peak, r.Held, r.Connected, r.Failed, r.Disconnected, r.Workers)
	fmt.Fprintf(w, "ramp: %v, %.0f connections/s on average, %d/s at most\n", r.Ramp.Round(time.Millisecond), r.ConnectRate, r.PeakConnectRate)
	if r.Recovered > 0 {
		fmt.Fprintf(w, "publications in subscribe replies (recovered): %d\n", r.Recovered)
	}
	if r.ServerRSSAtN > 0 {
		fmt.Fprintf(w, "server RSS: %.1f MiB before, %.1f MiB at N: %.2f KiB per connection (CPU %.0f%% while holding)\n",
			float64(r.ServerRSSBefore)/(1<<20), float64(r.ServerRSSAtN)/(1<<20), r.RSSPerConn/1024, r.ServerCPU)
		for _, s := range r.PerServer {
			fmt.Fprintf(w, "  pid %d: %.1f -> %.1f MiB, %.2f KiB per connection\n", s.PID, float64(s.RSSBefore)/(1<<20), float64(s.RSSAtN)/(1<<20), s.RSSPerConn/1024)
		}
	}
	if r.ClientRSS > 0 && r.Peak > 0 {
		fmt.Fprintf(w, "load generator RSS: %.1f MiB (%.2f KiB per connection)\n", float64(r.ClientRSS)/(1<<20), float64(r.ClientRSS)/float64(r.Peak)/1024)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "  %d× %s\n", e.Count, e.Error)
	}
}
