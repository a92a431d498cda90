package loadgen

import (
	"fmt"
	"os"
	"time"

	"github.com/prometheus/procfs"
)

// ProcSample is the CPU and memory of one or more processes at a moment.
type ProcSample struct {
	At int64 `json:"at"` // Unix ns
	// CPUSeconds is user + system time consumed so far.
	CPUSeconds float64 `json:"cpu_seconds"`
	// CPUPercent is the CPU use since the previous sample, in percent of
	// one core (200 is two busy cores).
	CPUPercent float64 `json:"cpu_percent"`
	RSS        int64   `json:"rss"` // VmRSS, bytes
	// Throttle is the CPU cgroups' bandwidth accounting so far, summed
	// over the processes' distinct groups; zero without a quota.
	Throttle CPUThrottle `json:"throttle,omitzero"`
}

// ReadProc samples process pid from /proc.
func ReadProc(pid int, at int64) (ProcSample, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return ProcSample{}, fmt.Errorf("process %d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return ProcSample{}, fmt.Errorf("process %d: /proc stat: %w", pid, err)
	}
	status, err := p.NewStatus()
	if err != nil {
		return ProcSample{}, fmt.Errorf("process %d: /proc status: %w", pid, err)
	}
	return ProcSample{At: at, CPUSeconds: st.CPUTime(), RSS: int64(status.VmRSS)}, nil
}

// Sampler samples a set of processes (the servers under test) and sums
// them. It is not safe for concurrent use.
type Sampler struct {
	pids []int
	prev *ProcSample
	// stats are the processes' cpu.stat files, found at the first Sample
	// (the processes are in their groups by then); resolved tells it ran.
	stats    []string
	resolved bool
	// Per holds each process's latest sample, in pid order.
	Per []ProcSample
}

// NewSampler samples pids; with none, Sample returns nothing.
func NewSampler(pids []int) *Sampler { return &Sampler{pids: pids} }

// Enabled reports whether there is anything to sample.
func (s *Sampler) Enabled() bool { return len(s.pids) > 0 }

// Sample reads every process and returns their sum, with the CPU use since
// the previous call.
func (s *Sampler) Sample(at int64) (ProcSample, error) {
	sum := ProcSample{At: at}
	s.Per = s.Per[:0]
	for _, pid := range s.pids {
		p, err := ReadProc(pid, at)
		if err != nil {
			return sum, err
		}
		s.Per = append(s.Per, p)
		sum.CPUSeconds += p.CPUSeconds
		sum.RSS += p.RSS
	}
	if !s.resolved {
		// A machine without cgroups, or with a group it cannot read, has
		// no throttling to report: CPU and memory are still sampled.
		s.stats, _ = cpuStatPaths(s.pids)
		s.resolved = true
	}
	for _, path := range s.stats {
		if t, err := readCPUThrottle(path); err == nil {
			sum.Throttle = sum.Throttle.add(t)
		}
	}
	if s.prev != nil {
		sum.CPUPercent = CPUPercent(*s.prev, sum)
	}
	s.prev = &sum
	return sum, nil
}

// CPUPercent is the CPU use between two samples in percent of one core.
func CPUPercent(from, to ProcSample) float64 {
	dt := time.Duration(to.At - from.At).Seconds()
	if dt <= 0 {
		return 0
	}
	return 100 * (to.CPUSeconds - from.CPUSeconds) / dt
}

// SelfSample samples this process; zero when /proc cannot be read.
func SelfSample(at int64) ProcSample {
	s, _ := ReadProc(os.Getpid(), at)
	return s
}
