package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// A soak run churns clients against a cluster for a long time at a steady,
// modest rate and watches the nodes: connections open, subscribe with
// recovery, receive for a while and close, while the server API publishes
// to the same history channels. It checks every session's stream (no gap,
// no duplicate, recovery always succeeds) and samples each node's RSS,
// goroutines and open files, which must stay flat.

// SoakNode is one node under test.
type SoakNode struct {
	// WS is the WebSocket endpoint, API the server API base
	// (http://host:port/api) and Metrics the Prometheus endpoint.
	WS, API, Metrics string
}

// SoakConfig shapes a soak run.
type SoakConfig struct {
	Nodes []SoakNode
	// Secret signs connection tokens (HS256); APIKey authenticates the
	// publisher.
	Secret, APIKey string
	// Duration is how long clients churn; Warmup is left out of the trend.
	Duration, Warmup time.Duration
	// Clients is the number of client slots, each a loop of sessions that
	// last between MinLife and MaxLife.
	Clients          int
	MinLife, MaxLife time.Duration
	// Channels are "<Prefix>0" … and must keep history with recovery
	// allowed; PubRate publications per second go to them in turn.
	Channels int
	Prefix   string
	PubRate  float64
	// SampleEvery paces the node samples.
	SampleEvery time.Duration
	// OnSample is told each sample as it is taken (progress output).
	OnSample func(SoakSample)
}

// SoakSample is one node's state at one time.
type SoakSample struct {
	At         time.Duration // since the start
	Node       int
	RSS        float64 // bytes
	Goroutines float64
	OpenFDs    float64
	Clients    float64
}

// SoakCounts are the run's totals; every field after Sessions is an error.
type SoakCounts struct {
	Sessions, Recovered, Received, Published int64

	DialErrors, ConnectErrors, SubscribeErrors, RecoveryFailures int64
	Gaps, Duplicates, PublishErrors, ReadErrors, ServerCloses    int64
}

// Errors sums the error counters.
func (c SoakCounts) Errors() int64 {
	return c.DialErrors + c.ConnectErrors + c.SubscribeErrors + c.RecoveryFailures +
		c.Gaps + c.Duplicates + c.PublishErrors + c.ReadErrors + c.ServerCloses
}

// SoakResult is what a soak run saw.
type SoakResult struct {
	Counts  SoakCounts
	Samples []SoakSample
	// FirstErrors are the first few errors' texts, for the report.
	FirstErrors []string
}

// soakState is shared by the run's goroutines.
type soakState struct {
	cfg   SoakConfig
	token func(user string) (string, error)
	start time.Time

	sessions, recovered, received, published        atomic.Int64
	dialErrs, connectErrs, subErrs, recoveryFails   atomic.Int64
	gaps, dups, publishErrs, readErrs, serverCloses atomic.Int64
	errMu                                           sync.Mutex
	firstErrs                                       []string
}

func (s *soakState) fail(n *atomic.Int64, format string, args ...any) {
	n.Add(1)
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if len(s.firstErrs) < 20 {
		s.firstErrs = append(s.firstErrs, fmt.Sprintf("%6.1fs ", time.Since(s.start).Seconds())+fmt.Sprintf(format, args...))
	}
}

// RunSoak runs a soak until cfg.Duration passes or ctx ends.
func RunSoak(ctx context.Context, cfg SoakConfig) (SoakResult, error) {
	if len(cfg.Nodes) == 0 || cfg.Clients <= 0 || cfg.Channels <= 0 || cfg.PubRate <= 0 {
		return SoakResult{}, errors.New("soak: nodes, clients, channels and a publication rate are required")
	}
	if cfg.MinLife <= 0 || cfg.MaxLife < cfg.MinLife {
		return SoakResult{}, fmt.Errorf("soak: session life %v–%v: want 0 < min ≤ max", cfg.MinLife, cfg.MaxLife)
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = 10 * time.Second
	}
	token, err := soakTokens(cfg.Secret)
	if err != nil {
		return SoakResult{}, err
	}
	s := &soakState{cfg: cfg, token: token, start: time.Now()}
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()

	var samples []SoakSample
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		samples = s.sampleLoop(runCtx)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.publishLoop(runCtx)
	}()
	for i := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.clientLoop(runCtx, i)
		}()
	}
	wg.Wait()
	return SoakResult{Counts: s.counts(), Samples: samples, FirstErrors: s.firstErrs}, nil
}

func (s *soakState) counts() SoakCounts {
	return SoakCounts{
		Sessions: s.sessions.Load(), Recovered: s.recovered.Load(), Received: s.received.Load(), Published: s.published.Load(),
		DialErrors: s.dialErrs.Load(), ConnectErrors: s.connectErrs.Load(), SubscribeErrors: s.subErrs.Load(),
		RecoveryFailures: s.recoveryFails.Load(), Gaps: s.gaps.Load(), Duplicates: s.dups.Load(),
		PublishErrors: s.publishErrs.Load(), ReadErrors: s.readErrs.Load(), ServerCloses: s.serverCloses.Load(),
	}
}

// clientLoop is one client slot: sessions one after another on the nodes
// in turn, each resuming the slot's channel from where the last one left.
func (s *soakState) clientLoop(ctx context.Context, slot int) {
	cfg := s.cfg
	ch := fmt.Sprintf("%s%d", cfg.Prefix, slot%cfg.Channels)
	var pos *soakPosition
	rng := rand.New(rand.NewPCG(uint64(slot), 7))
	// Slots start spread over the shortest life, so the churn is steady.
	if !sleepUntil(ctx, time.Duration(rng.Int64N(int64(cfg.MinLife)))) {
		return
	}
	for k := 0; ctx.Err() == nil; k++ {
		node := cfg.Nodes[(slot+k)%len(cfg.Nodes)]
		life := cfg.MinLife + time.Duration(rng.Int64N(int64(cfg.MaxLife-cfg.MinLife)+1))
		pos = s.session(ctx, node, fmt.Sprintf("soak-%d", slot), ch, pos, life)
	}
}

// sleepUntil waits d or until ctx ends; it reports whether d passed.
func sleepUntil(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
