package clusterstate

import (
	rtmetrics "runtime/metrics"
	"sync"
	"time"
)

// Per-node CPU and memory for the heartbeat: CPU time from getrusage
// where there is one (cputime_unix.go), else from the Go runtime's
// estimate; memory from the Go runtime's accounting (runtime/metrics).
// Both are cheap enough to read once per heartbeat.

// cpuSampleNames are the runtime's CPU classes that are work, as opposed
// to idle: user Go code, the garbage collector and the scavenger.
var cpuSampleNames = []string{
	"/cpu/classes/user:cpu-seconds",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/scavenge/total:cpu-seconds",
	"/memory/classes/total:bytes",
}

// Sampler turns the runtime's cumulative CPU seconds into a usage between
// two samples. The zero Sampler is ready to use.
type Sampler struct {
	mu      sync.Mutex
	lastCPU float64
	lastAt  time.Time
	// usage is the last figure, repeated to callers that come back
	// within minSampleWindow (Nodes may be called often), whose own
	// window would be too short to mean anything.
	usage float64
}

const minSampleWindow = time.Second

// Sample returns the CPU used since the previous call, in percent of one
// core (200 is two cores busy), and the bytes of memory the Go runtime
// holds from the OS. The first call reports the average since start.
func (p *Sampler) Sample(started time.Time) (cpu float64, mem uint64) {
	s := make([]rtmetrics.Sample, len(cpuSampleNames))
	for i, n := range cpuSampleNames {
		s[i].Name = n
	}
	rtmetrics.Read(s)
	var used float64
	if d, ok := processCPU(); ok {
		used = d.Seconds()
	} else {
		for _, x := range s[:3] {
			if x.Value.Kind() == rtmetrics.KindFloat64 {
				used += x.Value.Float64()
			}
		}
	}
	if v := s[3].Value; v.Kind() == rtmetrics.KindUint64 {
		mem = v.Uint64()
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	since, prev := started, 0.0
	if !p.lastAt.IsZero() {
		if now.Sub(p.lastAt) < minSampleWindow {
			return p.usage, mem
		}
		since, prev = p.lastAt, p.lastCPU
	}
	if wall := now.Sub(since).Seconds(); wall > 0 && used >= prev {
		cpu = (used - prev) / wall * 100
	}
	p.lastCPU, p.lastAt, p.usage = used, now, cpu
	return cpu, mem
}
