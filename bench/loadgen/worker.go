package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// RunWorker runs one worker: it reads its Job from in, opens the
// connections, reports Events on out and obeys Commands until OpStop or
// the end of in. It is the body of a worker process (`herald-bench
// worker`) and also runs in-process, over pipes.
func RunWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	w := newEventWriter(out)
	sc := newLineScanner(in)
	if !sc.Scan() {
		return fmt.Errorf("worker: no job on stdin: %v", sc.Err())
	}
	var job Job
	if err := json.Unmarshal(sc.Bytes(), &job); err != nil {
		return fmt.Errorf("worker: bad job: %w", err)
	}
	fail := func(err error) error {
		_ = w.send(Event{Type: EvError, Worker: job.Worker, Message: err.Error()})
		return err
	}
	if err := RaiseFileLimit(job.Count); err != nil {
		return fail(fmt.Errorf("worker %d: %w", job.Worker, err))
	}
	clock := NewClock()
	var tally *Tally
	var handler Handler
	shards := job.Pool.Shards
	if shards <= 0 {
		shards = defaultShards()
	}
	job.Pool.Shards = shards
	if job.Kind == JobSubscribers {
		tally = NewTally(job.Count, shards)
		handler = tallyHandler{tally: tally}
	} else if job.Kind != JobConns {
		return fail(fmt.Errorf("worker %d: unknown job kind %q", job.Worker, job.Kind))
	}
	pool, err := NewPool(job.Pool, clock, handler)
	if err != nil {
		return fail(fmt.Errorf("worker %d: %w", job.Worker, err))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	rampDone := make(chan struct{})
	var rampTook time.Duration
	go func() {
		defer close(rampDone)
		start := time.Now()
		Ramp(ctx, pool, job, clock)
		rampTook = time.Since(start)
	}()

	counters := func() Counters {
		c := pool.Counters()
		select {
		case <-rampDone:
			c.RampDone, c.Ramp = true, rampTook
		default:
		}
		self := SelfSample(clock.Now())
		c.RSS, c.CPUSeconds = self.RSS, self.CPUSeconds
		return c
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := job.Tick
		if tick <= 0 {
			tick = time.Second
		}
		t := time.NewTicker(tick)
		defer t.Stop()
		ready := rampDone
		for {
			select {
			case <-ctx.Done():
				return
			case <-ready:
				ready = nil
				_ = w.send(Event{Type: EvReady, Worker: job.Worker, Counters: counters(), Errors: pool.Errors()})
			case <-t.C:
				_ = w.send(Event{Type: EvTick, Worker: job.Worker, Counters: counters()})
			}
		}
	}()

	var cmdErr error
	for sc.Scan() {
		var cmd Command
		if err := json.Unmarshal(sc.Bytes(), &cmd); err != nil {
			cmdErr = fmt.Errorf("worker %d: bad command: %w", job.Worker, err)
			break
		}
		if cmd.Op == OpStop {
			break
		}
		if cmd.Op == OpFinalize && tally != nil {
			st, err := tally.Finalize(cmd.Step, cmd.N)
			if err != nil {
				cmdErr = fmt.Errorf("worker %d: %w", job.Worker, err)
				break
			}
			st.ReaderTurn, st.ReaderUnread = pool.TakeReaderSpans()
			_ = w.send(Event{Type: EvStep, Worker: job.Worker, Step: &st, Counters: counters(), Closes: pool.ServerCloses(), Bad: tally.Bad(), Late: tally.Late()})
		}
	}
	cancel()
	<-rampDone
	wg.Wait()
	final := counters()
	pool.Close()
	if cmdErr != nil {
		return fail(cmdErr)
	}
	ev := Event{Type: EvDone, Worker: job.Worker, Counters: final, Errors: pool.Errors()}
	if tally != nil {
		ev.Bad, ev.Late = tally.Bad(), tally.Late()
	}
	return w.send(ev)
}

// Ramp opens job.Count connections on an absolute schedule (connection j
// due at start + j/Rate), with at most DialConcurrency being set up at
// once. It returns when all were attempted or ctx ends.
func Ramp(ctx context.Context, pool *Pool, job Job, clock Clock) {
	par := job.DialConcurrency
	if par <= 0 {
		par = 64
	}
	stride := max(job.Stride, 1)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(par, max(job.Count, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				// Failures are counted by the pool.
				_, _ = pool.Open(ctx, job.First+j*stride, j)
			}
		}()
	}
	defer wg.Wait()
	defer close(next)
	pacer := RealPacer(clock, 0)
	start := clock.Now()
	if job.Rate <= 0 {
		for j := range job.Count {
			select {
			case next <- j:
			case <-ctx.Done():
				return
			}
		}
		return
	}
	step := Step{Rate: job.Rate, Duration: time.Duration(float64(job.Count) / job.Rate * float64(time.Second))}
	for j := range job.Count {
		if err := pacer.SleepUntil(ctx, start+int64(step.Offset(j))); err != nil {
			return
		}
		select {
		case next <- j:
		case <-ctx.Done():
			return
		}
	}
}

// tallyHandler counts publications in a Tally.
type tallyHandler struct{ tally *Tally }

func (h tallyHandler) Publication(shard, sub int, _ string, data []byte, at int64) {
	m, ok := ParsePayload(data)
	if !ok {
		h.tally.bad.Add(1)
		return
	}
	h.tally.Record(shard, sub, m, time.Duration(at-m.Intended))
}

// Messages counts the publications of one frame the heavy client decoded.
func (h tallyHandler) Messages(shard, sub int, ms []Message, at int64) {
	h.tally.RecordAll(shard, sub, ms, at)
}

// Message counts a publication the sdk client decoded.
func (h tallyHandler) Message(shard, sub int, m Message, at int64) {
	h.tally.Record(shard, sub, m, time.Duration(at-m.Intended))
}

func (tallyHandler) Reply(int, uint32, *protocol.Error) {}
