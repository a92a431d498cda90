package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
)

func benchThroughputCommand() *cobra.Command {
	var (
		f       rigFlags
		tc      loadgen.ThroughputConfig
		csvPath string
	)
	cmd := &cobra.Command{
		Use:   "throughput",
		Short: "Find the highest publication rate at which a given p99 still holds",
		Long: `Probes rates (multiplying --start by --factor while probes pass, then
bisecting) for --probe each. A probe passes when the p99 of all copies is at
most --p99, nothing is missing, no publish failed and at least 95% of the
offered rate was achieved.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tc.P99 <= 0 {
				return errors.New("--p99 is required")
			}
			cfg, err := f.config()
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
			if f.warmup > 0 {
				if _, err := rig.Probe(ctx, tc.Start, f.warmup); err != nil {
					return fmt.Errorf("warm-up: %w", err)
				}
			}
			res, serr := loadgen.FindThroughput(ctx, rig, tc, func(r loadgen.StepResult, pass bool) {
				verdict := "fail"
				if pass {
					verdict = "pass"
				}
				if f.jsonOut {
					_ = writeJSON(out, map[string]any{"probe": r, "pass": pass})
					return
				}
				fmt.Fprintf(errOut, "%s  %s\n", stepLine(r), verdict)
			})
			if cerr := rig.Close(); serr == nil {
				serr = cerr
			}
			if f.jsonOut {
				if err := writeJSON(out, map[string]any{"summary": res}); err != nil {
					return err
				}
			} else {
				if err := loadgen.WriteMarkdown(out, res.Probes); err != nil {
					return err
				}
				if res.Rate > 0 {
					fmt.Fprintf(out, "\nhighest rate with p99 <= %v: %.0f publications/s (%.0f deliveries/s, p99 %v)\n",
						tc.P99, res.Rate, res.Best.Deliveries, res.Best.All.P99)
				} else {
					fmt.Fprintf(out, "\nno probed rate held p99 <= %v\n", tc.P99)
				}
			}
			if csvPath != "" {
				if err := writeFileWith(csvPath, func(w io.Writer) error { return loadgen.WriteCSV(w, res.Probes) }); err != nil {
					return err
				}
			}
			return serr
		},
	}
	fs := cmd.Flags()
	f.register(fs)
	fs.DurationVar(&tc.P99, "p99", 0, "the p99 latency (all copies) that must hold (required)")
	fs.Float64Var(&tc.Start, "start", 100, "first rate probed, publications/s")
	fs.Float64Var(&tc.Factor, "factor", 2, "growth factor while probes pass")
	fs.DurationVar(&tc.Probe, "probe", 10*time.Second, "duration of each probe")
	fs.Float64Var(&tc.Precision, "precision", 0.05, "stop bisecting when the bracket is this narrow, relative")
	fs.IntVar(&tc.MaxProbes, "max-probes", 12, "most probes")
	fs.Float64Var(&tc.Max, "max-rate", 1e6, "highest rate probed")
	fs.StringVar(&csvPath, "csv", "", "write the probes as CSV to this file")
	return cmd
}
