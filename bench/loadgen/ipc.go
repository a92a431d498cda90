package loadgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Worker processes talk to the coordinator in JSON lines: the Job first and
// then Commands on the worker's stdin, Events on its stdout. Stdin closing
// stops a worker, so a coordinator that dies takes its workers with it.

// Job kinds.
const (
	// JobConns opens and holds connections.
	JobConns = "conns"
	// JobSubscribers opens subscribers and tallies what they receive.
	JobSubscribers = "subscribers"
)

// Job is the work of one worker process.
type Job struct {
	Kind   string     `json:"kind"`
	Worker int        `json:"worker"`
	Pool   PoolConfig `json:"pool"`
	// Count connections, numbered First, First+Stride, ...: the number
	// picks the URL, source address and user, so workers interleave over
	// the targets exactly as one process would.
	Count  int `json:"count"`
	First  int `json:"first"`
	Stride int `json:"stride"`
	// Rate is this worker's connections per second (0: as fast as
	// DialConcurrency allows).
	Rate float64 `json:"rate"`
	// DialConcurrency bounds the connections being set up at once (64).
	DialConcurrency int `json:"dial_concurrency"`
	// Tick is the interval between status events (1s).
	Tick time.Duration `json:"tick"`
}

// Command ops.
const (
	OpFinalize = "finalize" // report step Step (of N publications)
	OpStop     = "stop"     // close the connections and finish
)

// Command is a coordinator's request to a running worker.
type Command struct {
	Op   string `json:"op"`
	Step int    `json:"step,omitempty"`
	N    int    `json:"n,omitempty"`
}

// Event types.
const (
	EvTick  = "tick"  // Counters, every Tick
	EvReady = "ready" // every connection was attempted
	EvStep  = "step"  // a finalized step
	EvDone  = "done"  // the worker finished (last event)
	EvError = "error" // the worker cannot go on (last event)
)

// Event is a worker's report.
type Event struct {
	Type     string       `json:"type"`
	Worker   int          `json:"worker"`
	Counters Counters     `json:"counters"`
	Step     *StepTally   `json:"step,omitempty"`
	Errors   []ErrorCount `json:"errors,omitempty"`
	// Closes are the first closes the server sent, with each step.
	Closes []ServerClose `json:"closes,omitempty"`
	// Bad and Late are the tally's unattributable and late copies.
	Bad     int64  `json:"bad,omitempty"`
	Late    int64  `json:"late,omitempty"`
	Message string `json:"message,omitempty"`
}

// eventWriter serialises events from several goroutines onto one stream.
type eventWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
	err error
}

func newEventWriter(w io.Writer) *eventWriter { return &eventWriter{enc: json.NewEncoder(w)} }

func (w *eventWriter) send(ev Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		if err := w.enc.Encode(ev); err != nil {
			w.err = fmt.Errorf("write event: %w", err)
		}
	}
	return w.err
}

// maxLine bounds one JSON line between processes: a step tally carries
// two numbers per publication of the step.
const maxLine = 256 << 20

func newLineScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return sc
}
