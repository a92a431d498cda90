package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
)

// overloadConfig is what `herald-bench overload` does after connecting.
type overloadConfig struct {
	capacity      float64 // publications/s; 0: search for it
	search        loadgen.ThroughputConfig
	factor        float64       // overload rate = factor × capacity
	duration      time.Duration // of the overload
	drain         time.Duration // grace after the overload for its backlog
	recoveryRate  float64
	recoveryStep  time.Duration
	recoverySteps int
	recoveryP99   time.Duration
	recoveryLimit time.Duration
}

func benchOverloadCommand() *cobra.Command {
	var (
		f  rigFlags
		oc overloadConfig
	)
	cmd := &cobra.Command{
		Use:   "overload",
		Short: "Overload a server past its capacity, then check no reading client was closed and it recovered",
		Long: `Finds the server's capacity (the highest rate at which --p99 holds for all
copies, as the throughput command does) unless --capacity gives it, then
publishes at --factor times that rate for --duration, then at --recovery-rate
in steps of --recovery-step. The subscribers read as fast as they can
throughout.

It fails (exit status 1) when a subscriber was closed, when a publication the
server accepted did not reach every subscriber, or when the server did not
recover within --recovery-limit after the overload ended: recovered means
every step from then on has its p99 within --recovery-p99, nothing missing and
no publish refused. Publications the server refused (shed, error 111) are
counted and reported; refusing them is how a server may protect itself.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config()
			if err != nil {
				return err
			}
			// The overload's backlog can hold the publisher back longer
			// than a sweep allows; the step's own pacing is what is
			// measured.
			cfg.MaxLag = max(cfg.MaxLag, oc.duration)
			cfg.Warmup = 0
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			rig, err := loadgen.OpenRig(ctx, cfg)
			if err != nil {
				return err
			}
			defer rig.Close()
			fmt.Fprintf(errOut, "%d subscribers connected\n", rig.Connected)
			if f.warmup > 0 {
				if _, err := rig.Probe(ctx, oc.search.Start, f.warmup); err != nil {
					return fmt.Errorf("warm-up: %w", err)
				}
			}
			rep, err := runOverload(ctx, rig, oc, func(phase string, r loadgen.StepResult, verdict string) {
				fmt.Fprintf(errOut, "%-9s %s  %s\n", phase, stepLine(r), verdict)
			})
			if cerr := rig.Close(); err == nil && cerr != nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if f.jsonOut {
				if err := writeJSON(out, rep); err != nil {
					return err
				}
			} else {
				writeOverloadReport(out, rep)
			}
			if len(rep.Failures) > 0 {
				return fmt.Errorf("overload: %d checks failed", len(rep.Failures))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	f.register(fs)
	fs.Float64Var(&oc.capacity, "capacity", 0, "the server's capacity in publications/s (0: search for it)")
	fs.Float64Var(&oc.search.Start, "start", 200, "capacity search: first rate probed")
	fs.DurationVar(&oc.search.Probe, "probe", 3*time.Second, "capacity search: each probe's duration")
	fs.DurationVar(&oc.search.P99, "p99", 100*time.Millisecond, "capacity search: the all-copies p99 that must hold")
	fs.IntVar(&oc.search.MaxProbes, "max-probes", 8, "capacity search: probes at most")
	fs.Float64Var(&oc.factor, "factor", 2, "overload at this multiple of the capacity")
	fs.DurationVar(&oc.duration, "duration", 30*time.Second, "how long the overload lasts")
	fs.DurationVar(&oc.drain, "drain", 15*time.Second, "wait this long after the overload for its accepted publications to arrive; later ones count as missing")
	fs.Float64Var(&oc.recoveryRate, "recovery-rate", 100, "publications/s after the overload")
	fs.DurationVar(&oc.recoveryStep, "recovery-step", time.Second, "duration of each step after the overload")
	fs.IntVar(&oc.recoverySteps, "recovery-steps", 10, "steps after the overload")
	fs.DurationVar(&oc.recoveryP99, "recovery-p99", 100*time.Millisecond, "a step after the overload is recovered when its all-copies p99 is within this")
	fs.DurationVar(&oc.recoveryLimit, "recovery-limit", 5*time.Second, "fail unless the server recovered within this after the overload ended")
	return cmd
}

// overloadReport is the outcome of an overload run.
type overloadReport struct {
	Capacity     float64              `json:"capacity"` // publications/s
	Search       []loadgen.StepResult `json:"search,omitempty"`
	Overload     loadgen.StepResult   `json:"overload"`
	Recovery     []loadgen.StepResult `json:"recovery"`
	RecoveredIn  time.Duration        `json:"recovered_in"` // -1: not recovered
	Disconnected int64                `json:"disconnected"` // subscribers closed during the run
	// Closes are the first closes the server sent the subscribers from
	// the overload on, with what the load tool's readers knew of them.
	Closes   []loadgen.ServerClose `json:"closes,omitempty"`
	Failures []string              `json:"failures,omitempty"`
}

// runOverload finds the capacity (unless given), overloads and watches
// the recovery. It returns an error only when the run itself failed; the
// checks' failures are in the report.
func runOverload(ctx context.Context, rig *loadgen.Rig, oc overloadConfig, progress func(phase string, r loadgen.StepResult, verdict string)) (overloadReport, error) {
	var rep overloadReport
	if oc.factor <= 1 || oc.duration <= 0 || oc.recoveryRate <= 0 || oc.recoveryStep <= 0 || oc.recoverySteps <= 0 {
		return rep, errors.New("overload: want --factor above 1 and positive --duration, --recovery-rate, --recovery-step and --recovery-steps")
	}
	rep.Capacity = oc.capacity
	if rep.Capacity <= 0 {
		res, err := loadgen.FindThroughput(ctx, rig, oc.search, func(r loadgen.StepResult, pass bool) {
			verdict := "fail"
			if pass {
				verdict = "pass"
			}
			progress("capacity", r, verdict)
		})
		rep.Search = res.Probes
		if err != nil {
			return rep, fmt.Errorf("capacity search: %w", err)
		}
		if res.Rate <= 0 {
			return rep, fmt.Errorf("capacity search: no rate from %.0f/s held a p99 of %v", oc.search.Start, oc.search.P99)
		}
		rep.Capacity = res.Rate
	}
	before, from := rig.Counters().Disconnected, loadgen.NewClock().Now()
	steps := []loadgen.Step{{Rate: oc.factor * rep.Capacity, Duration: oc.duration, Grace: oc.drain}}
	for range oc.recoverySteps {
		steps = append(steps, loadgen.Step{Rate: oc.recoveryRate, Duration: oc.recoveryStep, Down: true, Grace: oc.drain})
	}
	res, err := rig.Sweep(ctx, steps, func(r loadgen.StepResult) {
		phase := "overload"
		if r.Down {
			phase = "recovery"
		}
		progress(phase, r, "")
	})
	if err != nil {
		return rep, fmt.Errorf("overload: %w", err)
	}
	if res.Stopped != "" || len(res.Steps) != len(steps) {
		return rep, fmt.Errorf("overload: the run stopped after %d of %d steps: %s", len(res.Steps), len(steps), res.Stopped)
	}
	rep.Overload, rep.Recovery = res.Steps[0], res.Steps[1:]
	rep.Disconnected = rig.Counters().Disconnected - before
	for _, c := range rig.ServerCloses() {
		if c.At >= from {
			rep.Closes = append(rep.Closes, c)
		}
	}
	rep.RecoveredIn = recoveredIn(rep.Recovery, oc)
	rep.Failures = overloadFailures(rep, oc)
	return rep, nil
}

// recoveredIn is how long after the overload ended the server recovered:
// the start of the first step from which every step holds the recovery
// p99 with nothing missing and nothing refused; -1 if none.
func recoveredIn(steps []loadgen.StepResult, oc overloadConfig) time.Duration {
	from := -1
	for i, r := range steps {
		ok := r.All.Count > 0 && r.All.P99 <= oc.recoveryP99 && r.Missing == 0 && r.Errors == 0
		switch {
		case !ok:
			from = -1
		case from < 0:
			from = i
		}
	}
	if from < 0 {
		return -1
	}
	return time.Duration(from) * oc.recoveryStep
}

// overloadFailures lists the checks a run failed.
func overloadFailures(rep overloadReport, oc overloadConfig) []string {
	var fails []string
	if rep.Disconnected > 0 {
		fails = append(fails, fmt.Sprintf("%d subscribers were closed; every one of them was reading", rep.Disconnected))
	}
	if m := rep.Overload.Missing; m > 0 {
		fails = append(fails, fmt.Sprintf("%d copies of publications the server accepted during the overload never arrived", m))
	}
	for _, r := range rep.Recovery {
		if r.Missing > 0 {
			fails = append(fails, fmt.Sprintf("%d copies missing in the recovery step %d", r.Missing, r.Index))
		}
	}
	switch {
	case rep.RecoveredIn < 0:
		fails = append(fails, fmt.Sprintf("not recovered %v after the overload", time.Duration(len(rep.Recovery))*oc.recoveryStep))
	case rep.RecoveredIn > oc.recoveryLimit:
		fails = append(fails, fmt.Sprintf("recovered %v after the overload, more than %v", rep.RecoveredIn, oc.recoveryLimit))
	}
	return fails
}

func writeOverloadReport(w io.Writer, rep overloadReport) {
	o := rep.Overload
	fmt.Fprintf(w, "| | |\n|---|---|\n")
	fmt.Fprintf(w, "| capacity (all-copies p99 held) | %.0f publications/s |\n", rep.Capacity)
	fmt.Fprintf(w, "| overload | %.0f publications/s offered for %v |\n", o.Rate, o.Duration)
	fmt.Fprintf(w, "| accepted | %d of %d (%.0f/s) |\n", o.Accepted, o.Sent, o.Achieved)
	fmt.Fprintf(w, "| refused (shed) | %d |\n", o.Errors)
	if o.FirstError != "" {
		fmt.Fprintf(w, "| first refusal | %s |\n", o.FirstError)
	}
	fmt.Fprintf(w, "| copies delivered | %d (%.0f/s), %d missing, %d duplicate |\n", o.Received, o.Deliveries, o.Missing, o.Duplicates)
	fmt.Fprintf(w, "| latency of accepted, all copies | p50 %v, p99 %v, max %v |\n", o.All.P50, o.All.P99, o.All.Max)
	if o.ReaderTurn > 0 {
		fmt.Fprintf(w, "| load tool's readers | longest turn %v; longest a subscriber waited unread with bytes in its socket %v |\n",
			o.ReaderTurn.Round(time.Millisecond), o.ReaderUnread.Round(time.Millisecond))
	}
	if o.ServerCPU > 0 {
		fmt.Fprintf(w, "| server CPU, RSS at the end | %.0f%%, %.1f MiB |\n", o.ServerCPU, float64(o.ServerRSS)/(1<<20))
	}
	fmt.Fprintf(w, "| subscribers closed | %d |\n", rep.Disconnected)
	for _, c := range rep.Closes {
		fmt.Fprintf(w, "| closed by the server | %s |\n", describeClose(c))
	}
	if rep.RecoveredIn >= 0 {
		fmt.Fprintf(w, "| recovered | within %v of the overload's end |\n", rep.RecoveredIn)
	} else {
		fmt.Fprintf(w, "| recovered | no |\n")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "After the overload:")
	fmt.Fprintln(w)
	_ = loadgen.WriteMarkdown(w, rep.Recovery)
	for _, f := range rep.Failures {
		fmt.Fprintln(w, "FAILED:", f)
	}
}

// describeClose is one close the server sent, with what the load tool's
// reader knew of the connection: whether it was starved (a long unread
// wait, a long turn) or read in shares too small for its receive buffer
// to reopen its window (loadgen.ServerClose).
func describeClose(c loadgen.ServerClose) string {
	s := fmt.Sprintf("worker %d, subscriber %d: %d", c.Worker, c.Sub, c.Code)
	if c.Reason != "" {
		s += " " + c.Reason
	}
	if c.RcvBuf > 0 {
		s += fmt.Sprintf("; its receive buffer %.2f MiB", float64(c.RcvBuf)/(1<<20))
	}
	return s + fmt.Sprintf("; left unread with bytes waiting at most %v; its reader's longest turn %v",
		c.Unread.Round(time.Millisecond), c.Turn.Round(time.Millisecond))
}
