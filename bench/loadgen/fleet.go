package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// Launcher starts one worker and returns its command stream (the worker's
// stdin), its event stream (stdout) and a wait function.
type Launcher interface {
	Launch(ctx context.Context, worker int) (in io.WriteCloser, out io.ReadCloser, wait func() error, err error)
}

// ExecLauncher runs each worker as a child process: Path with Args (for
// herald-bench: its own executable and "worker"). Each process has its own
// open-files limit, which is how one machine goes past ~20,000
// connections.
type ExecLauncher struct {
	Path string
	Args []string
}

// Launch starts the process. Its stderr is this process's stderr.
func (l ExecLauncher) Launch(ctx context.Context, worker int) (io.WriteCloser, io.ReadCloser, func() error, error) {
	cmd := exec.CommandContext(ctx, l.Path, l.Args...)
	cmd.Stderr = os.Stderr
	ownProcessGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("start worker %d (%s): %w", worker, l.Path, err)
	}
	return in, out, cmd.Wait, nil
}

// InProcessLauncher runs workers as goroutines of this process (tests, and
// library users below one process's open-files limit).
type InProcessLauncher struct{}

// Launch runs RunWorker over pipes.
func (InProcessLauncher) Launch(ctx context.Context, _ int) (io.WriteCloser, io.ReadCloser, func() error, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := RunWorker(ctx, inR, outW)
		_ = inR.Close()
		_ = outW.CloseWithError(io.EOF)
		done <- err
	}()
	return inW, outR, func() error { return <-done }, nil
}

// Fleet is a set of running workers.
type Fleet struct {
	workers []fleetWorker
	events  chan Event
	readers sync.WaitGroup
}

type fleetWorker struct {
	mu   sync.Mutex
	in   io.WriteCloser
	enc  *json.Encoder
	wait func() error
}

// StartFleet launches one worker per job and starts reading their events.
func StartFleet(ctx context.Context, l Launcher, jobs []Job) (*Fleet, error) {
	f := &Fleet{workers: make([]fleetWorker, len(jobs)), events: make(chan Event, 64*len(jobs)+64)}
	for i, job := range jobs {
		in, out, wait, err := l.Launch(ctx, i)
		if err != nil {
			f.Stop()
			return nil, err
		}
		w := &f.workers[i]
		w.in, w.enc, w.wait = in, json.NewEncoder(in), wait
		f.readers.Add(1)
		go f.read(i, out)
		if err := w.enc.Encode(job); err != nil {
			f.Stop()
			return nil, fmt.Errorf("send job to worker %d: %w", i, err)
		}
	}
	go func() {
		f.readers.Wait()
		close(f.events)
	}()
	return f, nil
}

func (f *Fleet) read(i int, out io.ReadCloser) {
	defer f.readers.Done()
	defer out.Close()
	sc := newLineScanner(out)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			f.events <- Event{Type: EvError, Worker: i, Message: fmt.Sprintf("unreadable event: %v", err)}
			return
		}
		ev.Worker = i
		f.events <- ev
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		f.events <- Event{Type: EvError, Worker: i, Message: fmt.Sprintf("reading events: %v", err)}
	}
}

// Events delivers every worker's events; it is closed when all workers
// have closed their output.
func (f *Fleet) Events() <-chan Event { return f.events }

// Size is the number of workers.
func (f *Fleet) Size() int { return len(f.workers) }

// Send gives worker i a command.
func (f *Fleet) Send(i int, c Command) error {
	w := &f.workers[i]
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.enc == nil {
		return fmt.Errorf("worker %d: stopped", i)
	}
	if err := w.enc.Encode(c); err != nil {
		return fmt.Errorf("worker %d: send %s: %w", i, c.Op, err)
	}
	return nil
}

// Broadcast gives every worker a command.
func (f *Fleet) Broadcast(c Command) error {
	var errs []error
	for i := range f.workers {
		errs = append(errs, f.Send(i, c))
	}
	return errors.Join(errs...)
}

// Stop tells every worker to stop (closing their stdin) without waiting.
func (f *Fleet) Stop() {
	for i := range f.workers {
		w := &f.workers[i]
		w.mu.Lock()
		if w.in != nil {
			_ = w.enc.Encode(Command{Op: OpStop})
			_ = w.in.Close()
			w.in, w.enc = nil, nil
		}
		w.mu.Unlock()
	}
}

// Wait waits for every worker to exit.
func (f *Fleet) Wait() error {
	var errs []error
	for i := range f.workers {
		if w := f.workers[i].wait; w != nil {
			if err := w(); err != nil {
				errs = append(errs, fmt.Errorf("worker %d: %w", i, err))
			}
		}
	}
	return errors.Join(errs...)
}

// SplitJobs divides n connections over workers of at most perWorker each,
// interleaving connection numbers (worker w gets w, w+W, ...) and sharing
// rate equally.
func SplitJobs(base Job, n, perWorker, workers int, rate float64) ([]Job, error) {
	if n <= 0 {
		return nil, errors.New("no connections asked for")
	}
	if perWorker <= 0 {
		return nil, errors.New("per-worker limit must be positive")
	}
	need := (n + perWorker - 1) / perWorker
	if workers <= 0 {
		workers = need
	}
	if workers < need {
		return nil, fmt.Errorf("%d connections over %d workers is more than %d per worker (the open-files limit): use at least %d workers", n, workers, perWorker, need)
	}
	workers = min(workers, n)
	jobs := make([]Job, workers)
	for w := range workers {
		j := base
		j.Worker = w
		j.First = w
		j.Stride = workers
		j.Count = n / workers
		if w < n%workers {
			j.Count++
		}
		j.Rate = rate / float64(workers)
		jobs[w] = j
	}
	return jobs, nil
}
