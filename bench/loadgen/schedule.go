package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Step is one rate of a sweep: publications offered at Rate per second for
// Duration.
type Step struct {
	Rate     float64       `json:"rate"`
	Duration time.Duration `json:"duration"`
	// Warmup steps run like the others but stay out of the results.
	Warmup bool `json:"warmup,omitempty"`
	// Down marks the descending half of a sweep, for reports.
	Down bool `json:"down,omitempty"`
	// Grace, when positive, replaces the rig's grace for this step: a
	// step that overloads the server leaves a backlog to deliver.
	Grace time.Duration `json:"grace,omitempty"`
}

// Count is the number of publications in the step.
func (s Step) Count() int {
	if s.Rate <= 0 || s.Duration <= 0 {
		return 0
	}
	return int(math.Round(s.Rate * s.Duration.Seconds()))
}

// Offset is when publication q is due, from the step's start. It is
// computed from q, not accumulated, so rounding never drifts.
func (s Step) Offset(q int) time.Duration {
	return time.Duration(float64(q) * float64(time.Second) / s.Rate)
}

// Sweep makes the steps from..to by `by` (inclusive), each lasting per;
// with down it then steps back to from, without repeating the top.
func Sweep(from, to, by float64, per time.Duration, down bool) ([]Step, error) {
	if from <= 0 || to < from || by <= 0 {
		return nil, fmt.Errorf("rate sweep %v..%v by %v: want 0 < from <= to and by > 0", from, to, by)
	}
	if per <= 0 {
		return nil, fmt.Errorf("step duration %v: must be positive", per)
	}
	n := int(math.Floor((to-from)/by+1e-9)) + 1
	if n > maxSteps/2 {
		return nil, fmt.Errorf("rate sweep %v..%v by %v: %d steps, at most %d", from, to, by, n, maxSteps/2)
	}
	steps := make([]Step, 0, 2*n)
	for i := range n {
		steps = append(steps, Step{Rate: from + float64(i)*by, Duration: per})
	}
	if down {
		for i := n - 2; i >= 0; i-- {
			steps = append(steps, Step{Rate: from + float64(i)*by, Duration: per, Down: true})
		}
	}
	return steps, nil
}

// ParseRates reads a rate list: "FROM:TO:BY" (a sweep, see Sweep) or
// "R1,R2,...", each step lasting per.
func ParseRates(spec string, per time.Duration, down bool) ([]Step, error) {
	spec = strings.TrimSpace(spec)
	if parts := strings.Split(spec, ":"); len(parts) == 3 {
		var v [3]float64
		for i, p := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil {
				return nil, fmt.Errorf("rates %q: %q is not a number", spec, p)
			}
			v[i] = f
		}
		return Sweep(v[0], v[1], v[2], per, down)
	}
	if per <= 0 {
		return nil, fmt.Errorf("step duration %v: must be positive", per)
	}
	var up []Step
	for _, p := range strings.Split(spec, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f <= 0 {
			return nil, fmt.Errorf("rates %q: %q is not a positive number (want FROM:TO:BY or R1,R2,...)", spec, p)
		}
		up = append(up, Step{Rate: f, Duration: per})
	}
	steps := up
	if down {
		for i := len(up) - 2; i >= 0; i-- {
			s := up[i]
			s.Down = true
			steps = append(steps, s)
		}
	}
	if len(steps) > maxSteps {
		return nil, fmt.Errorf("rates %q: %d steps, at most %d", spec, len(steps), maxSteps)
	}
	return steps, nil
}

// Message identifies one publication: step K of the run, N publications in
// that step, Seq in 0..N-1, and the time it was due (Unix ns, from a
// Clock). Subscribers read it back from the payload.
type Message struct {
	Step     int
	N        int
	Seq      int
	Intended int64
}

// ErrSaturated stops a run whose sender fell further behind its schedule
// than the pacer's MaxLag: the offered rate is beyond what the system
// takes, and going on would only grow the backlog.
var ErrSaturated = errors.New("publisher fell behind its schedule (saturated)")

// Pacer emits the messages of a step on an absolute timeline: message q is
// due at start + step.Offset(q), whatever happened before. When emit
// blocks (the server is slow), later messages go out late but keep their
// due times, and latency is measured from the due time: the stall is
// charged to every message it delayed instead of being hidden
// (coordinated omission).
type Pacer struct {
	// Now reads the clock (Unix ns).
	Now func() int64
	// SleepUntil waits until the clock reads ns, or ctx ends.
	SleepUntil func(ctx context.Context, ns int64) error
	// MaxLag, when positive, ends the step with ErrSaturated once a
	// message goes out more than MaxLag after it was due.
	MaxLag time.Duration
}

// RealPacer paces on c.
func RealPacer(c Clock, maxLag time.Duration) Pacer {
	return Pacer{
		Now: c.Now,
		SleepUntil: func(ctx context.Context, ns int64) error {
			d := time.Duration(ns - c.Now())
			if d <= 0 {
				return ctx.Err()
			}
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		MaxLag: maxLag,
	}
}

// PaceStats describes how a step's sending went.
type PaceStats struct {
	// Emitted counts the messages handed to emit.
	Emitted int
	// MaxLag is the furthest behind schedule a message went out.
	MaxLag time.Duration
}

// Run emits step k's messages, the first due at start (Unix ns). It returns
// when all are emitted, emit fails, ctx ends or the pacer saturates.
func (p Pacer) Run(ctx context.Context, k int, step Step, start int64, emit func(Message) error) (PaceStats, error) {
	var st PaceStats
	n := step.Count()
	for q := 0; q < n; q++ {
		due := start + int64(step.Offset(q))
		now := p.Now()
		if now < due {
			if err := p.SleepUntil(ctx, due); err != nil {
				return st, err
			}
			now = p.Now()
		} else if err := ctx.Err(); err != nil {
			return st, err
		}
		if lag := time.Duration(now - due); lag > st.MaxLag {
			st.MaxLag = lag
		}
		if p.MaxLag > 0 && st.MaxLag > p.MaxLag {
			return st, fmt.Errorf("step %d at %.0f/s: %v behind: %w", k, step.Rate, st.MaxLag.Round(time.Millisecond), ErrSaturated)
		}
		if err := emit(Message{Step: k, N: n, Seq: q, Intended: due}); err != nil {
			return st, err
		}
		st.Emitted++
	}
	return st, nil
}
