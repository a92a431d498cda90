package loadgen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LatencyConfig configures a latency Rig: subscribers on some nodes,
// a publisher on another, one channel.
type LatencyConfig struct {
	// Pool describes the subscribers' connections (URLs, sources, format,
	// secret); Channels is set to Channel.
	Pool            PoolConfig
	Subscribers     int
	Workers         int
	PerWorker       int
	ConnectRate     float64
	DialConcurrency int
	Channel         string
	// PayloadSize is each publication's data size in bytes (128).
	PayloadSize int

	// APIURL (http://host:port/api) publishes through the server API with
	// APIKey over APIConns connections, Batch publications per request
	// at most. Without it, the publisher is a client connection to
	// ClientURL (the channel must allow client publishing).
	APIURL    string
	APIKey    string
	APIConns  int
	Batch     int
	ClientURL string
	// PublishTimeout bounds one publish request (10s).
	PublishTimeout time.Duration

	// Warmup runs the first rate this long before the measured steps.
	Warmup time.Duration
	// Grace is waited after a step's last publication completed before
	// its copies are counted: later ones are missing (2s).
	Grace time.Duration
	// P99Limit stops a sweep after the first step whose all-copies p99 is
	// above it (0: never).
	P99Limit time.Duration
	// MaxLag stops a step whose publisher fell this far behind schedule
	// (10s; the rate is beyond what the system takes).
	MaxLag     time.Duration
	ServerPIDs []int
	Launcher   Launcher
	// SetupTimeout bounds connecting the subscribers (2m).
	SetupTimeout time.Duration
}

// StepResult is one measured step.
type StepResult struct {
	Index    int           `json:"index"`
	Rate     float64       `json:"rate"` // offered, publications/s
	Down     bool          `json:"down,omitempty"`
	Warmup   bool          `json:"warmup,omitempty"`
	Duration time.Duration `json:"duration"`
	Offered  int           `json:"offered"`  // publications scheduled
	Sent     int           `json:"sent"`     // handed to the publisher
	Accepted int64         `json:"accepted"` // acknowledged by the server
	Errors   int64         `json:"publish_errors"`
	// Achieved is Accepted over the time the step's sending took (at
	// least its duration).
	Achieved float64 `json:"achieved"`
	// Lag is how far behind schedule the publisher fell.
	Lag         time.Duration `json:"lag"`
	Subscribers int           `json:"subscribers"`
	Expected    int64         `json:"expected"`
	Received    int64         `json:"received"`
	Missing     int64         `json:"missing"`
	Duplicates  int64         `json:"duplicates"`
	// Deliveries is Received per second of the step.
	Deliveries float64     `json:"deliveries"`
	First      Percentiles `json:"first"`
	All        Percentiles `json:"all"`
	Last       Percentiles `json:"last"`
	// Server CPU (percent of one core, summed over the sampled servers)
	// over the step, and their summed RSS at its end.
	ServerCPU float64 `json:"server_cpu,omitempty"`
	// BenchCPU is the load tool's own CPU over the step (coordinator and
	// workers, percent of one core): on a shared machine it competes with
	// the server.
	BenchCPU  float64 `json:"bench_cpu,omitempty"`
	ServerRSS int64   `json:"server_rss,omitempty"`
	// ServerThrottle is the servers' CPU cgroup throttling over the step
	// (periods, periods whose quota ran out, time waited for the next);
	// zero when they run without a CPU quota.
	ServerThrottle CPUThrottle `json:"server_throttle,omitzero"`
	FirstError     string      `json:"first_error,omitempty"`
	// ReaderTurn is the longest turn of the light subscribers' readers
	// over the step (one pass over their ready connections), and
	// ReaderUnread the longest a connection waited unread with bytes in
	// its socket: how far the load tool itself fell behind reading.
	ReaderTurn   time.Duration `json:"reader_turn,omitempty"`
	ReaderUnread time.Duration `json:"reader_unread,omitempty"`
}

// stepAcct counts a step's publish outcomes.
type stepAcct struct {
	accepted atomic.Int64
	failed   atomic.Int64
	lastDone atomic.Int64
	firstErr atomic.Pointer[string]
}

// Rig is a set of connected subscribers and a publisher, ready to run
// steps.
type Rig struct {
	cfg     LatencyConfig
	clock   Clock
	fleet   *Fleet
	pub     Publisher
	queue   chan Message
	senders sync.WaitGroup
	acct    [maxSteps]stepAcct
	nextK   int

	routeMu sync.Mutex
	routes  map[int]chan *StepTally
	closes  map[int][]ServerClose // by worker, as of its last step
	failure atomic.Pointer[string]

	samplesMu sync.Mutex
	samples   []ProcSample // servers
	bench     []ProcSample // this tool: coordinator and workers
	agg       *Aggregator
	stop      chan struct{}
	bg        sync.WaitGroup

	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error

	// Connected is the number of subscribers that connected.
	Connected int64
}

// OpenRig connects the subscribers (in worker processes) and the
// publisher.
func OpenRig(ctx context.Context, cfg LatencyConfig) (*Rig, error) {
	if cfg.Channel == "" {
		return nil, errors.New("no channel")
	}
	if cfg.PayloadSize <= 0 {
		cfg.PayloadSize = 128
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 2 * time.Second
	}
	if cfg.MaxLag <= 0 {
		cfg.MaxLag = 10 * time.Second
	}
	if cfg.PublishTimeout <= 0 {
		cfg.PublishTimeout = 10 * time.Second
	}
	if cfg.SetupTimeout <= 0 {
		cfg.SetupTimeout = 2 * time.Minute
	}
	cfg.APIConns = max(cfg.APIConns, 1)
	cfg.Batch = max(cfg.Batch, 1)
	cfg.Pool.Channels = []string{cfg.Channel}
	if cfg.Launcher == nil {
		cfg.Launcher = InProcessLauncher{}
	}
	per, err := PerWorkerLimit(cfg.PerWorker)
	if err != nil {
		return nil, err
	}
	jobs, err := SplitJobs(Job{Kind: JobSubscribers, Pool: cfg.Pool, DialConcurrency: cfg.DialConcurrency}, cfg.Subscribers, per, cfg.Workers, cfg.ConnectRate)
	if err != nil {
		return nil, err
	}
	s := &Rig{cfg: cfg, clock: NewClock(), routes: map[int]chan *StepTally{}, closes: map[int][]ServerClose{}, stop: make(chan struct{}), agg: NewAggregator(len(jobs))}
	s.fleet, err = StartFleet(context.WithoutCancel(ctx), cfg.Launcher, jobs)
	if err != nil {
		return nil, err
	}
	ready := make(chan Event, len(jobs))
	s.bg.Add(1)
	go s.dispatch(ready)
	if err := s.awaitReady(ctx, ready, len(jobs)); err != nil {
		s.Close()
		return nil, err
	}
	switch {
	case cfg.APIURL != "":
		s.pub = NewAPIPublisher(cfg.APIURL, cfg.APIKey, cfg.APIConns, cfg.PublishTimeout)
	case cfg.ClientURL != "":
		pc := cfg.Pool
		pc.URLs = []string{cfg.ClientURL}
		pc.UserPrefix += "publisher-"
		s.pub, err = NewClientPublisher(ctx, pc, s.clock)
		if err != nil {
			s.Close()
			return nil, err
		}
	default:
		s.Close()
		return nil, errNoPublisher
	}
	s.queue = make(chan Message, 4096)
	for range cfg.APIConns {
		s.senders.Add(1)
		go s.send()
	}
	if len(cfg.ServerPIDs) > 0 {
		s.bg.Add(1)
		go s.sample()
	}
	return s, nil
}

func (s *Rig) awaitReady(ctx context.Context, ready <-chan Event, workers int) error {
	timer := time.NewTimer(s.cfg.SetupTimeout)
	defer timer.Stop()
	var failed int64
	errs := map[string]int64{}
	for got := 0; got < workers; {
		select {
		case ev, ok := <-ready:
			if !ok {
				return fmt.Errorf("subscriber workers stopped while connecting: %s", s.failureText())
			}
			got++
			s.Connected += ev.Counters.Connected
			failed += ev.Counters.Failed
			for _, e := range ev.Errors {
				errs[e.Error] += e.Count
			}
		case <-timer.C:
			return fmt.Errorf("subscribers not connected after %v (%d so far)", s.cfg.SetupTimeout, s.Connected)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if failed > 0 || s.Connected < int64(s.cfg.Subscribers) {
		var b strings.Builder
		for k, v := range errs {
			fmt.Fprintf(&b, "; %d× %s", v, k)
		}
		return fmt.Errorf("%d of %d subscribers connected%s", s.Connected, s.cfg.Subscribers, b.String())
	}
	return nil
}

// ServerCloses are the first closes the server sent the subscribers, as
// the workers reported them with their last step, in the order read.
func (s *Rig) ServerCloses() []ServerClose {
	s.routeMu.Lock()
	var out []ServerClose
	for _, cs := range s.closes {
		out = append(out, cs...)
	}
	s.routeMu.Unlock()
	slices.SortFunc(out, func(a, b ServerClose) int { return cmp.Compare(a.At, b.At) })
	return out
}

func (s *Rig) failureText() string {
	if p := s.failure.Load(); p != nil {
		return *p
	}
	return "no reason given"
}

// dispatch routes worker events.
func (s *Rig) dispatch(ready chan<- Event) {
	defer s.bg.Done()
	defer close(ready)
	for ev := range s.fleet.Events() {
		switch ev.Type {
		case EvReady:
			ready <- ev
		case EvTick:
			now := s.clock.Now()
			self := SelfSample(now)
			s.samplesMu.Lock()
			s.agg.Update(ev.Worker, ev.Counters)
			t := s.agg.Total()
			s.bench = append(s.bench, ProcSample{At: now, CPUSeconds: t.CPUSeconds + self.CPUSeconds, RSS: t.RSS + self.RSS})
			s.samplesMu.Unlock()
		case EvStep:
			s.routeMu.Lock()
			ch := s.routes[ev.Step.Step]
			if len(ev.Closes) > 0 {
				for i := range ev.Closes {
					ev.Closes[i].Worker = ev.Worker
				}
				s.closes[ev.Worker] = ev.Closes
			}
			s.routeMu.Unlock()
			if ch != nil {
				ch <- ev.Step
			}
		case EvError:
			msg := fmt.Sprintf("worker %d: %s", ev.Worker, ev.Message)
			s.failure.CompareAndSwap(nil, &msg)
		}
	}
}

// send publishes queued messages, batching what is already due.
func (s *Rig) send() {
	defer s.senders.Done()
	msgs := make([]Message, 0, s.cfg.Batch)
	payloads := make([][]byte, 0, s.cfg.Batch)
	for m := range s.queue {
		if s.closing.Load() {
			continue // drop the backlog: nobody will count it
		}
		msgs = append(msgs[:0], m)
	fill:
		for len(msgs) < s.cfg.Batch {
			select {
			case m, ok := <-s.queue:
				if !ok {
					break fill
				}
				msgs = append(msgs, m)
			default:
				break fill
			}
		}
		payloads = payloads[:0]
		for _, m := range msgs {
			payloads = append(payloads, AppendPayload(nil, m, s.cfg.PayloadSize))
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.PublishTimeout)
		ok, err := s.pub.Publish(ctx, s.cfg.Channel, payloads)
		cancel()
		now := s.clock.Now()
		for i, m := range msgs {
			a := &s.acct[m.Step]
			if i < ok {
				a.accepted.Add(1)
			} else {
				a.failed.Add(1)
				if err != nil {
					msg := err.Error()
					a.firstErr.CompareAndSwap(nil, &msg)
				}
			}
			for cur := a.lastDone.Load(); now > cur && !a.lastDone.CompareAndSwap(cur, now); cur = a.lastDone.Load() {
			}
		}
	}
}

// sample reads the servers' CPU and RSS every second.
func (s *Rig) sample() {
	defer s.bg.Done()
	sm := NewSampler(s.cfg.ServerPIDs)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		if p, err := sm.Sample(s.clock.Now()); err == nil {
			s.samplesMu.Lock()
			s.samples = append(s.samples, p)
			s.samplesMu.Unlock()
		}
		select {
		case <-t.C:
		case <-s.stop:
			return
		}
	}
}

// use is the CPU and the cgroup throttling between two times and the RSS
// at the end, from the samples nearest to them.
func use(samples []ProcSample, from, to int64) (cpu float64, rss int64, throttle CPUThrottle) {
	var a, b *ProcSample
	for i := range samples {
		p := &samples[i]
		if p.At <= from || a == nil {
			a = p
		}
		if p.At <= to || b == nil {
			b = p
		}
	}
	if a == nil || b == nil || b.At <= a.At {
		return 0, 0, CPUThrottle{}
	}
	return CPUPercent(*a, *b), b.RSS, b.Throttle.Sub(a.Throttle)
}

// pace schedules step k's publications from start.
func (s *Rig) pace(ctx context.Context, k int, step Step, start int64) (PaceStats, error) {
	if k >= maxSteps {
		return PaceStats{}, fmt.Errorf("more than %d steps in one rig", maxSteps)
	}
	ch := make(chan *StepTally, s.fleet.Size())
	s.routeMu.Lock()
	s.routes[k] = ch
	s.routeMu.Unlock()
	p := RealPacer(s.clock, s.cfg.MaxLag)
	return p.Run(ctx, k, step, start, func(m Message) error {
		select {
		case s.queue <- m:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// finalize waits for step k's publications to complete and the grace to
// pass, collects the workers' tallies and merges them.
func (s *Rig) finalize(ctx context.Context, k int, step Step, start int64, ps PaceStats) (StepResult, error) {
	a := &s.acct[k]
	r := StepResult{Index: k, Rate: step.Rate, Down: step.Down, Warmup: step.Warmup, Duration: step.Duration,
		Offered: step.Count(), Sent: ps.Emitted, Lag: ps.MaxLag}
	// Publications still in flight finish within the publish timeout.
	deadline := time.Now().Add(s.cfg.PublishTimeout + time.Second)
	for a.accepted.Load()+a.failed.Load() < int64(ps.Emitted) && time.Now().Before(deadline) {
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return r, err
		}
	}
	grace := s.cfg.Grace
	if step.Grace > 0 {
		grace = step.Grace
	}
	if err := sleepCtx(ctx, grace); err != nil {
		return r, err
	}
	r.Accepted, r.Errors = a.accepted.Load(), a.failed.Load()
	if e := a.firstErr.Load(); e != nil {
		r.FirstError = *e
	}
	end := max(a.lastDone.Load(), start+int64(step.Duration))
	if span := time.Duration(end - start).Seconds(); span > 0 {
		r.Achieved = float64(r.Accepted) / span
	}
	s.samplesMu.Lock()
	r.ServerCPU, r.ServerRSS, r.ServerThrottle = use(s.samples, start, start+int64(step.Duration))
	r.BenchCPU, _, _ = use(s.bench, start, start+int64(step.Duration))
	s.samplesMu.Unlock()

	s.routeMu.Lock()
	ch := s.routes[k]
	s.routeMu.Unlock()
	defer func() {
		s.routeMu.Lock()
		delete(s.routes, k)
		s.routeMu.Unlock()
	}()
	if err := s.fleet.Broadcast(Command{Op: OpFinalize, Step: k, N: step.Count()}); err != nil {
		return r, err
	}
	tallies := make([]StepTally, 0, s.fleet.Size())
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	for len(tallies) < s.fleet.Size() {
		select {
		case t := <-ch:
			tallies = append(tallies, *t)
		case <-timer.C:
			return r, fmt.Errorf("step %d: %d of %d workers reported (%s)", k, len(tallies), s.fleet.Size(), s.failureText())
		case <-ctx.Done():
			return r, ctx.Err()
		}
	}
	d, err := MergeTallies(r.Accepted, tallies)
	if err != nil {
		return r, err
	}
	r.Subscribers, r.Expected, r.Received, r.Missing, r.Duplicates = d.Subscribers, d.Expected, d.Received, d.Missing, d.Duplicates
	r.Deliveries = float64(d.Received) / step.Duration.Seconds()
	r.First, r.All, r.Last = d.First.Percentiles(), d.All.Percentiles(), d.Last.Percentiles()
	r.ReaderTurn, r.ReaderUnread = d.ReaderTurn, d.ReaderUnread
	return r, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SweepResult is a Sweep's outcome.
type SweepResult struct {
	Steps []StepResult `json:"steps"`
	// Stopped says why the sweep ended before its last step, if it did.
	Stopped string `json:"stopped,omitempty"`
}

// Sweep runs the steps back to back on one absolute timeline (a warm-up
// first, when configured), finalizing each while the next runs. onStep
// sees each measured step in order.
func (s *Rig) Sweep(ctx context.Context, steps []Step, onStep func(StepResult)) (SweepResult, error) {
	var res SweepResult
	if len(steps) == 0 {
		return res, errors.New("no steps")
	}
	all := steps
	if s.cfg.Warmup > 0 {
		all = append([]Step{{Rate: steps[0].Rate, Duration: s.cfg.Warmup, Warmup: true}}, steps...)
	}
	type out struct {
		r   StepResult
		err error
	}
	outs := make([]chan out, len(all))
	for i := range outs {
		outs[i] = make(chan out, 1)
	}
	// Results are reported in order as they come, while later steps run.
	paced := make(chan int, len(all)+1)
	var errs []error
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for i := range paced {
			o := <-outs[i]
			if o.err != nil {
				errs = append(errs, o.err)
				continue
			}
			if o.r.Warmup {
				continue
			}
			res.Steps = append(res.Steps, o.r)
			if onStep != nil {
				onStep(o.r)
			}
		}
	}()
	var crossed atomic.Pointer[string]
	start := s.clock.Now() + int64(100*time.Millisecond)
	var paceErr error
	for i, step := range all {
		if c := crossed.Load(); c != nil {
			res.Stopped = *c
			break
		}
		k := s.nextK
		s.nextK++
		ps, err := s.pace(ctx, k, step, start)
		go func(i, k int, step Step, start int64) {
			r, err := s.finalize(context.WithoutCancel(ctx), k, step, start, ps)
			if err == nil && !step.Warmup && s.cfg.P99Limit > 0 && r.All.P99 > s.cfg.P99Limit {
				msg := fmt.Sprintf("p99 %v above the %v limit at %.0f/s", r.All.P99.Round(time.Microsecond), s.cfg.P99Limit, step.Rate)
				crossed.CompareAndSwap(nil, &msg)
			}
			outs[i] <- out{r, err}
		}(i, k, step, start)
		paced <- i
		start += int64(step.Duration)
		if err != nil {
			if errors.Is(err, ErrSaturated) {
				res.Stopped = err.Error()
			} else {
				paceErr = err
			}
			break
		}
	}
	close(paced)
	<-collected
	if res.Stopped == "" {
		if c := crossed.Load(); c != nil && len(res.Steps) < len(steps) {
			res.Stopped = *c
		}
	}
	return res, errors.Join(append(errs, paceErr)...)
}

// Probe runs one step of rate for d and measures it.
func (s *Rig) Probe(ctx context.Context, rate float64, d time.Duration) (StepResult, error) {
	step := Step{Rate: rate, Duration: d}
	k := s.nextK
	s.nextK++
	start := s.clock.Now() + int64(50*time.Millisecond)
	ps, err := s.pace(ctx, k, step, start)
	r, ferr := s.finalize(context.WithoutCancel(ctx), k, step, start, ps)
	if err != nil && !errors.Is(err, ErrSaturated) {
		return r, err
	}
	if ferr != nil {
		return r, ferr
	}
	if err != nil {
		r.FirstError = err.Error()
	}
	return r, nil
}

// Counters sums the subscriber workers' latest counters: Disconnected
// counts subscribers the server (or the network) closed.
func (s *Rig) Counters() Counters {
	s.samplesMu.Lock()
	defer s.samplesMu.Unlock()
	return s.agg.Total()
}

// Close stops the publisher and the subscribers. It may be called more
// than once.
func (s *Rig) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Rig) close() error {
	s.closing.Store(true)
	if s.queue != nil {
		close(s.queue)
		s.senders.Wait()
	}
	if s.pub != nil {
		s.pub.Close()
	}
	close(s.stop)
	s.fleet.Stop()
	werr := s.fleet.Wait()
	s.bg.Wait()
	return werr
}
