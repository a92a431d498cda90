package loadgen

import (
	"context"
	"errors"
	"math"
	"time"
)

// ThroughputConfig configures FindThroughput.
type ThroughputConfig struct {
	// Start is the first rate probed; each passing probe multiplies it by
	// Factor until one fails, then the search bisects.
	Start, Factor float64
	// Probe is each probe's duration.
	Probe time.Duration
	// P99 is the all-copies p99 that must hold.
	P99 time.Duration
	// Precision ends the bisection when (fail − pass) / pass is below it.
	Precision float64
	// MaxProbes bounds the search.
	MaxProbes int
	// Max bounds the rates probed.
	Max float64
}

// ThroughputResult is the highest passing rate and every probe.
type ThroughputResult struct {
	Rate   float64      `json:"rate"` // highest offered rate that passed (0: none)
	Best   *StepResult  `json:"best,omitempty"`
	Probes []StepResult `json:"probes"`
}

// Passes reports whether a probe held: it measured copies, Served holds
// for its all-copies p99, and it recorded no error.
func (c ThroughputConfig) Passes(r StepResult) bool {
	return r.All.Count > 0 && r.FirstError == "" && Served(r.All.P99, c.P99, r.Missing, r.Errors, r.Achieved, r.Rate)
}

// Served is the rule a step of a rate sweep passes to count as served,
// the one rule of herald-bench's sweeps (throughput's probes, the map
// update steps, bench/sidebyside.sh's table): p99 within limit, nothing
// missing, no publish errors, and at least 95% of the offered rate
// achieved.
func Served(p99, limit time.Duration, missing, errors int64, achieved, rate float64) bool {
	return p99 <= limit && missing == 0 && errors == 0 && achieved >= 0.95*rate
}

// FindThroughput searches for the highest rate at which cfg.P99 holds.
func FindThroughput(ctx context.Context, s *Rig, cfg ThroughputConfig, onProbe func(StepResult, bool)) (ThroughputResult, error) {
	var res ThroughputResult
	if cfg.P99 <= 0 || cfg.Start <= 0 || cfg.Probe <= 0 {
		return res, errors.New("throughput: want a positive p99, start rate and probe duration")
	}
	if cfg.Factor <= 1 {
		cfg.Factor = 2
	}
	if cfg.Precision <= 0 {
		cfg.Precision = 0.05
	}
	if cfg.MaxProbes <= 0 {
		cfg.MaxProbes = 12
	}
	if cfg.Max <= 0 {
		cfg.Max = 1e6
	}
	next := NewSearch(cfg.Start, cfg.Factor, cfg.Precision, cfg.Max)
	for range cfg.MaxProbes {
		rate, ok := next.Next()
		if !ok {
			break
		}
		r, err := s.Probe(ctx, rate, cfg.Probe)
		if err != nil {
			return res, err
		}
		pass := cfg.Passes(r)
		res.Probes = append(res.Probes, r)
		if onProbe != nil {
			onProbe(r, pass)
		}
		next.Report(pass)
		if pass && rate >= res.Rate {
			res.Rate = rate
			best := r
			res.Best = &best
		}
	}
	return res, nil
}

// Search is the rate search: grow by a factor while probes pass, then
// bisect between the highest pass and the lowest failure.
type Search struct {
	factor, precision, max float64
	rate, pass, fail       float64
}

// NewSearch starts at start.
func NewSearch(start, factor, precision, max float64) *Search {
	return &Search{factor: factor, precision: precision, max: max, rate: start, fail: math.Inf(1)}
}

// Next is the rate to probe, false when the search is done.
func (s *Search) Next() (float64, bool) {
	if s.rate <= 0 || s.rate > s.max {
		return 0, false
	}
	if !math.IsInf(s.fail, 1) && s.pass > 0 && (s.fail-s.pass)/s.pass < s.precision {
		return 0, false
	}
	if !math.IsInf(s.fail, 1) && s.pass == 0 && s.fail < 1 {
		return 0, false
	}
	return s.rate, true
}

// Report records the outcome of the last rate from Next.
func (s *Search) Report(pass bool) {
	if pass {
		s.pass = s.rate
	} else {
		s.fail = s.rate
	}
	if math.IsInf(s.fail, 1) {
		s.rate *= s.factor
		if s.rate > s.max && s.pass < s.max {
			s.rate = s.max
		}
		return
	}
	s.rate = (s.pass + s.fail) / 2
}
