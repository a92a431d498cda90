package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
)

func benchLatencyCommand() *cobra.Command {
	var (
		f        rigFlags
		rates    string
		step     time.Duration
		down     bool
		p99Limit time.Duration
		csvPath  string
		pngPath  string
		title    string
	)
	cmd := &cobra.Command{
		Use:   "latency",
		Short: "Publish at stepped rates and measure publish-to-receive latency",
		Long: `Subscribers (spread over --url) join one channel; a publisher (--api, or
--publish-url for a client connection) sends publications of --payload bytes
at each rate of --rates for --step, up and (with --down) back down. Sends follow
an absolute timeline and latency is measured from each publication's intended
send time, so a stalled server is charged for every publication it delayed.
For every step: offered and achieved rate, p50/p95/p99/max latency of the
first copy and of all copies, missing and duplicate copies. Prints a
Markdown table; --csv and --png write the same as CSV and a chart.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config()
			if err != nil {
				return err
			}
			cfg.P99Limit = p99Limit
			steps, err := loadgen.ParseRates(rates, step, down)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			rig, err := loadgen.OpenRig(ctx, cfg)
			if err != nil {
				return err
			}
			defer rig.Close()
			fmt.Fprintf(errOut, "%d subscribers connected; %d steps of %v\n", rig.Connected, len(steps), step)
			res, serr := rig.Sweep(ctx, steps, func(r loadgen.StepResult) {
				if f.jsonOut {
					_ = writeJSON(out, map[string]any{"step": r})
					return
				}
				fmt.Fprintln(errOut, stepLine(r))
			})
			if cerr := rig.Close(); serr == nil {
				serr = cerr
			}
			if err := writeLatencyOutputs(out, f.jsonOut, res, csvPath, pngPath, title); err != nil {
				return err
			}
			if res.Stopped != "" {
				fmt.Fprintln(errOut, "stopped early:", res.Stopped)
			}
			return serr
		},
	}
	fs := cmd.Flags()
	f.register(fs)
	fs.StringVar(&rates, "rates", "100:2000:100", "rates in publications/s: FROM:TO:BY or R1,R2,...")
	fs.DurationVar(&step, "step", 15*time.Second, "duration of each rate")
	fs.BoolVar(&down, "down", true, "after the highest rate, step back down")
	fs.DurationVar(&p99Limit, "p99-limit", 0, "stop after a step whose p99 (all copies) is above this (0: never)")
	fs.StringVar(&csvPath, "csv", "", "write the steps as CSV to this file")
	fs.StringVar(&pngPath, "png", "", "write a chart of latency percentiles against rate to this PNG file")
	fs.StringVar(&title, "title", "herald bench latency", "chart title")
	return cmd
}

// stepLine is a one-line progress report of a finished step.
func stepLine(r loadgen.StepResult) string {
	dir := "up"
	if r.Down {
		dir = "down"
	}
	line := fmt.Sprintf("step %2d %-4s %6.0f/s offered %6.0f/s achieved  all p50 %v p99 %v max %v  first p99 %v  missing %d dup %d",
		r.Index, dir, r.Rate, r.Achieved, r.All.P50, r.All.P99, r.All.Max, r.First.P99, r.Missing, r.Duplicates)
	// Failed publishes say what the server answered (e.g. the temporary
	// error of an engine shard that is down).
	if r.Errors > 0 {
		line += fmt.Sprintf("  publish errors %d (first: %s)", r.Errors, r.FirstError)
	}
	return line
}

func writeLatencyOutputs(out io.Writer, jsonOut bool, res loadgen.SweepResult, csvPath, pngPath, title string) error {
	if jsonOut {
		if err := writeJSON(out, map[string]any{"summary": res}); err != nil {
			return err
		}
	} else if err := loadgen.WriteMarkdown(out, res.Steps); err != nil {
		return err
	}
	if csvPath != "" {
		if err := writeFileWith(csvPath, func(w io.Writer) error { return loadgen.WriteCSV(w, res.Steps) }); err != nil {
			return err
		}
	}
	if pngPath != "" && len(res.Steps) > 0 {
		if err := writeFileWith(pngPath, func(w io.Writer) error { return loadgen.WritePNG(w, title, res.Steps) }); err != nil {
			return err
		}
	}
	return nil
}
