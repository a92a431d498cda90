package loadgen

import (
	"fmt"
	"strings"
	"time"
)

// Counters are one worker's cumulative connection counts. Workers send
// them every second; cumulative values make the coordinator's sums
// immune to a lost or late report.
type Counters struct {
	Attempted    int64 `json:"attempted"`
	Connected    int64 `json:"connected"`    // connect replies received
	Disconnected int64 `json:"disconnected"` // closed by the server or the network, not by us
	Failed       int64 `json:"failed"`       // attempts that never connected
	Current      int64 `json:"current"`      // open and connected now
	// Recovered counts the publications subscribe replies carried (a
	// recovering subscribe's, e.g. cache recovery's latest publication).
	Recovered int64 `json:"recovered,omitempty"`
	// RampDone is set once the worker has attempted all its connections.
	RampDone bool `json:"ramp_done,omitempty"`
	// Ramp is how long the worker took to attempt all its connections
	// (set with RampDone); the total is the slowest worker's.
	Ramp time.Duration `json:"ramp,omitempty"`
	// RSS is the worker process's own resident memory, in bytes.
	RSS int64 `json:"rss,omitempty"`
	// CPUSeconds is the worker process's own CPU time so far.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
}

// add sums c into a.
func (a *Counters) add(c Counters) {
	a.Attempted += c.Attempted
	a.Connected += c.Connected
	a.Disconnected += c.Disconnected
	a.Failed += c.Failed
	a.Current += c.Current
	a.Recovered += c.Recovered
	a.RSS += c.RSS
	a.CPUSeconds += c.CPUSeconds
	a.Ramp = max(a.Ramp, c.Ramp)
}

// Aggregator sums the latest Counters of every worker and turns them into
// one status per tick.
type Aggregator struct {
	workers int
	latest  []Counters
	seen    []bool
	prev    Counters
	peak    int64
}

// NewAggregator aggregates `workers` workers.
func NewAggregator(workers int) *Aggregator {
	return &Aggregator{workers: workers, latest: make([]Counters, workers), seen: make([]bool, workers)}
}

// Update records worker w's latest counters.
func (a *Aggregator) Update(w int, c Counters) {
	if w < 0 || w >= a.workers {
		return
	}
	a.latest[w] = c
	a.seen[w] = true
}

// Total sums the latest counters of all workers. RampDone is set when
// every worker has reported it.
func (a *Aggregator) Total() Counters {
	var t Counters
	t.RampDone = a.workers > 0
	for i, c := range a.latest {
		t.add(c)
		t.RampDone = t.RampDone && a.seen[i] && c.RampDone
	}
	return t
}

// Tick closes one interval: it returns the status with the counts since
// the previous Tick.
func (a *Aggregator) Tick(elapsed time.Duration) Status {
	t := a.Total()
	a.peak = max(a.peak, t.Current)
	s := Status{
		Elapsed:         elapsed,
		Current:         t.Current,
		Peak:            a.peak,
		NewConnected:    t.Connected - a.prev.Connected,
		NewDisconnected: t.Disconnected - a.prev.Disconnected,
		Failed:          t.Failed,
		Totals:          t,
	}
	a.prev = t
	return s
}

// Status is one status line of `bench conns`.
type Status struct {
	Elapsed time.Duration `json:"elapsed"`
	Current int64         `json:"current"`
	// Peak is the highest Current seen at a tick.
	Peak            int64    `json:"peak"`
	NewConnected    int64    `json:"connected"`    // in the last interval
	NewDisconnected int64    `json:"disconnected"` // in the last interval
	Failed          int64    `json:"failed"`       // in total
	Totals          Counters `json:"totals"`
	// Target is the number of connections asked for.
	Target int64 `json:"target"`
	// Server is the summed sample of the server processes, if sampled.
	Server *ProcSample `json:"server,omitempty"`
}

// FormatStatus renders a status as one plain line.
func FormatStatus(s Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%6s  current %s  peak %s  +%s/s  -%s/s  failed %s",
		fmtElapsed(s.Elapsed), group(s.Current), group(s.Peak),
		group(s.NewConnected), group(s.NewDisconnected), group(s.Failed))
	if s.Server != nil {
		fmt.Fprintf(&b, "  server rss %s cpu %.0f%%", fmtBytes(s.Server.RSS), s.Server.CPUPercent)
	}
	if s.Totals.RSS > 0 {
		fmt.Fprintf(&b, "  client rss %s", fmtBytes(s.Totals.RSS))
	}
	return b.String()
}

// FormatProgress renders a status as a progress bar for a terminal.
func FormatProgress(s Status, width int) string {
	frac := 0.0
	if s.Target > 0 {
		frac = min(float64(s.Current)/float64(s.Target), 1)
	}
	filled := int(frac * float64(width))
	return fmt.Sprintf("[%s%s] %3.0f%% %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), frac*100, FormatStatus(s))
}

func fmtElapsed(d time.Duration) string {
	return d.Truncate(time.Second).String()
}

// group writes n with thousands separators: 123,456.
func group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
}
