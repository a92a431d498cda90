package loadgen

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ConnsConfig configures RunConns.
type ConnsConfig struct {
	Pool        PoolConfig
	Connections int
	// Rate is connections per second over all workers (0: unpaced).
	Rate float64
	// Workers is the number of worker processes (0: as many as the
	// per-worker limit needs).
	Workers int
	// PerWorker caps one worker's connections (DefaultPerWorker, and
	// never above the open-files hard limit).
	PerWorker       int
	DialConcurrency int
	// Hold keeps the connections open this long after the ramp (0: until
	// ctx ends).
	Hold time.Duration
	// Settle is waited after the ramp before the server's memory counts
	// as "at N connections" (3s).
	Settle time.Duration
	// ServerPIDs are sampled every second (CPU, RSS).
	ServerPIDs []int
	// Timeout bounds the whole run, ramp included (0: none beyond Hold).
	Timeout  time.Duration
	Launcher Launcher
}

// ConnsResult summarises a RunConns.
type ConnsResult struct {
	Target       int64 `json:"target"`
	Workers      int   `json:"workers"`
	Peak         int64 `json:"peak"`
	Held         int64 `json:"held"` // connected at the end of the hold
	Connected    int64 `json:"connected"`
	Failed       int64 `json:"failed"`
	Disconnected int64 `json:"disconnected"`
	// Recovered counts the publications subscribe replies carried.
	Recovered int64 `json:"recovered,omitempty"`
	// Ramp is the time the slowest worker took to set up all its
	// connections.
	Ramp time.Duration `json:"ramp"`
	// ConnectRate is Connected / Ramp.
	ConnectRate float64 `json:"connect_rate"`
	// PeakConnectRate is the most connections completed in one tick.
	PeakConnectRate int64 `json:"peak_connect_rate"`
	// Server memory: summed over ServerPIDs, before the first connection
	// and at N (the median of the samples taken after Settle).
	ServerRSSBefore int64 `json:"server_rss_before,omitempty"`
	ServerRSSAtN    int64 `json:"server_rss_at_n,omitempty"`
	// RSSPerConn is (ServerRSSAtN − ServerRSSBefore) / N, in bytes, where
	// N is the connections held when the samples were taken.
	RSSPerConn float64 `json:"rss_per_conn,omitempty"`
	// PerServer is the same per process, assuming connections were spread
	// evenly over the servers (as the URLs are, round-robin).
	PerServer []ServerMemory `json:"per_server,omitempty"`
	ServerCPU float64        `json:"server_cpu_percent,omitempty"` // mean over the hold
	// ClientRSS is the workers' summed RSS at N.
	ClientRSS int64        `json:"client_rss"`
	Errors    []ErrorCount `json:"errors,omitempty"`
	Statuses  []Status     `json:"-"`
}

// ServerMemory is one server process's memory.
type ServerMemory struct {
	PID        int     `json:"pid"`
	RSSBefore  int64   `json:"rss_before"`
	RSSAtN     int64   `json:"rss_at_n"`
	RSSPerConn float64 `json:"rss_per_conn"`
}

// RunConns opens and holds cfg.Connections over worker processes, calls
// onStatus once per second, then closes everything.
func RunConns(ctx context.Context, cfg ConnsConfig, onStatus func(Status)) (ConnsResult, error) {
	res := ConnsResult{Target: int64(cfg.Connections)}
	per, err := PerWorkerLimit(cfg.PerWorker)
	if err != nil {
		return res, err
	}
	jobs, err := SplitJobs(Job{Kind: JobConns, Pool: cfg.Pool, DialConcurrency: cfg.DialConcurrency}, cfg.Connections, per, cfg.Workers, cfg.Rate)
	if err != nil {
		return res, err
	}
	res.Workers = len(jobs)
	if cfg.Settle <= 0 {
		cfg.Settle = 3 * time.Second
	}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	clock := NewClock()
	sampler := NewSampler(cfg.ServerPIDs)
	var before []ProcSample
	if sampler.Enabled() {
		s, err := sampler.Sample(clock.Now())
		if err != nil {
			return res, err
		}
		res.ServerRSSBefore = s.RSS
		before = slices.Clone(sampler.Per)
	}
	launcher := cfg.Launcher
	if launcher == nil {
		launcher = InProcessLauncher{}
	}
	// The fleet outlives ctx's cancellation just long enough to close the
	// connections cleanly.
	fleetCtx, stopFleet := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFleet()
	fleet, err := StartFleet(fleetCtx, launcher, jobs)
	if err != nil {
		return res, err
	}
	agg := NewAggregator(len(jobs))
	start := clock.Now()
	var rampEnd, holdEnd int64
	var atN [][]int64 // per-sample: summed RSS then per-pid RSS
	var heldN []int64
	var cpu []float64
	var workerErr error
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	events := fleet.Events()
	errs := map[string]int64{}
	done := 0
loop:
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				break loop
			}
			switch ev.Type {
			case EvTick, EvReady:
				agg.Update(ev.Worker, ev.Counters)
			case EvDone:
				agg.Update(ev.Worker, ev.Counters)
				for _, e := range ev.Errors {
					errs[e.Error] += e.Count
				}
				done++
			case EvError:
				workerErr = errors.Join(workerErr, fmt.Errorf("worker %d: %s", ev.Worker, ev.Message))
				fleet.Stop()
			}
		case <-ticker.C:
			now := clock.Now()
			st := agg.Tick(time.Duration(now - start))
			st.Target = res.Target
			res.PeakConnectRate = max(res.PeakConnectRate, st.NewConnected)
			if sampler.Enabled() {
				s, err := sampler.Sample(now)
				if err != nil {
					workerErr = errors.Join(workerErr, err)
					fleet.Stop()
				} else {
					st.Server = &s
				}
			}
			res.Statuses = append(res.Statuses, st)
			if onStatus != nil {
				onStatus(st)
			}
			if rampEnd == 0 && st.Totals.RampDone {
				rampEnd = now
				if cfg.Hold > 0 {
					holdEnd = rampEnd + int64(max(cfg.Hold, cfg.Settle))
				}
			}
			if rampEnd != 0 && now-rampEnd >= int64(cfg.Settle) {
				res.ClientRSS = st.Totals.RSS
				if st.Server != nil {
					row := []int64{st.Server.RSS}
					for _, p := range sampler.Per {
						row = append(row, p.RSS)
					}
					atN = append(atN, row)
					heldN = append(heldN, st.Current)
					cpu = append(cpu, st.Server.CPUPercent)
				}
			}
			if holdEnd != 0 && now >= holdEnd {
				res.Held = st.Current
				fleet.Stop()
				holdEnd = 0
			}
		case <-ctx.Done():
			if res.Held == 0 {
				res.Held = agg.Total().Current
			}
			fleet.Stop()
			ctx = context.Background() // once
		}
	}
	werr := fleet.Wait()
	tot := agg.Total()
	res.Peak = max(agg.peak, tot.Current)
	res.Connected, res.Failed, res.Disconnected, res.Recovered = tot.Connected, tot.Failed, tot.Disconnected, tot.Recovered
	res.Ramp = tot.Ramp
	if res.Ramp > 0 {
		res.ConnectRate = float64(tot.Connected) / res.Ramp.Seconds()
	}
	for k, v := range errs {
		res.Errors = append(res.Errors, ErrorCount{Error: k, Count: v})
	}
	slices.SortFunc(res.Errors, func(a, b ErrorCount) int { return int(b.Count - a.Count) })
	if len(atN) > 0 {
		n := median(heldN)
		res.ServerRSSAtN = median(column(atN, 0))
		if n > 0 {
			res.RSSPerConn = float64(res.ServerRSSAtN-res.ServerRSSBefore) / float64(n)
			for i, b := range before {
				at := median(column(atN, i+1))
				res.PerServer = append(res.PerServer, ServerMemory{
					PID: cfg.ServerPIDs[i], RSSBefore: b.RSS, RSSAtN: at,
					RSSPerConn: float64(at-b.RSS) / (float64(n) / float64(len(before))),
				})
			}
		}
		res.ServerCPU = mean(cpu)
	}
	if workerErr == nil && done < len(jobs) && werr != nil {
		workerErr = werr
	}
	return res, workerErr
}

func column(rows [][]int64, i int) []int64 {
	out := make([]int64, 0, len(rows))
	for _, r := range rows {
		if i < len(r) {
			out = append(out, r[i])
		}
	}
	return out
}

// median of v (the lower middle for even lengths); 0 when empty.
func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}
