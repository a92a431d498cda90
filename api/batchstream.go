package api

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/heraldhq/herald/protocol"
)

// A batch's replies can be far larger than its commands: a 53 KB batch of
// history reads once answered 403 MB, all of it held in memory until the
// end. So the replies are written as they are ready, in command order,
// holding at most maxConcurrency of them, and their total is bounded by
// Config.MaxBatchResponseSize: the reply that would pass it, and every
// one after it, is error 106 naming the limit, and commands not yet
// started by then do not run.

// flushAt is how much encoded output is gathered before it is written.
const flushAt = 32 << 10

// batchStream writes one batch's replies in order within the limit.
type batchStream struct {
	w       http.ResponseWriter
	x       *exchange
	limit   int64
	written int64 // bytes of the replies written so far, commas included
	n       int   // commands in the batch
	next    int   // index of the next reply to write
	failed  bool  // a write failed: the caller is gone, keep draining
	over    atomic.Bool
	// notRun and dropped are the refusals: a command that did not run,
	// and one whose reply did not fit. They are not counted against the
	// limit: at most MaxBatchCommands of them, about 250 bytes each.
	notRun, dropped *Error
	// maxReply is Config.MaxResponseSize; tooLarge refuses a reply past
	// it.
	maxReply int64
	tooLarge *Error
}

// streamBatch runs cmds and streams {"replies":[…]} to w.
func (a *handler) streamBatch(w http.ResponseWriter, ctx context.Context, x *exchange, cmds []json.RawMessage, parallel bool) {
	limit := a.cfg.MaxBatchResponseSize
	b := &batchStream{
		w: w, x: x, limit: limit, n: len(cmds),
		notRun:   newError(protocol.ErrorLimitExceeded, "limit exceeded: the batch's replies reached the limit of %d bytes (http_api.max_batch_response_size): command not run; send fewer or smaller reads per batch", limit),
		dropped:  newError(protocol.ErrorLimitExceeded, "limit exceeded: this reply would take the batch's replies past the limit of %d bytes (http_api.max_batch_response_size): the command ran, its reply is dropped", limit),
		maxReply: a.cfg.MaxResponseSize,
		tooLarge: a.responseTooLarge("command's", ": the command ran, its reply is dropped; ask for less"),
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	x.out.WriteString(`{"replies":[`)
	if !parallel || len(cmds) <= 1 {
		for _, raw := range cmds {
			var rep any
			ran := !b.over.Load()
			if ran {
				rep = a.runCommand(ctx, raw)
			}
			b.add(rep, ran)
		}
	} else {
		a.parallelBatch(ctx, b, cmds)
	}
	x.out.WriteString("]}")
	b.flush()
}

// parallelBatch runs cmds concurrently, at most maxConcurrency started and
// not yet written at a time, so that finished replies waiting for an
// earlier slow one stay few.
func (a *handler) parallelBatch(ctx context.Context, b *batchStream, cmds []json.RawMessage) {
	replies := make([]any, len(cmds))
	ran := make([]bool, len(cmds))
	done := make([]chan struct{}, len(cmds))
	for i := range done {
		done[i] = make(chan struct{})
	}
	window := make(chan struct{}, maxConcurrency)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range cmds {
			window <- struct{}{} // released once reply i is written
			wg.Go(func() {
				defer close(done[i])
				if !b.over.Load() {
					ran[i] = true
					replies[i] = a.runCommand(ctx, cmds[i])
				}
			})
		}
	})
	for i := range cmds {
		<-done[i]
		b.add(replies[i], ran[i])
		replies[i] = nil // let the written reply go
		<-window
	}
	wg.Wait()
}

// add writes the next reply, or the refusal that replaces it: when its
// command did not run, when an earlier reply reached the limit, or when
// it would pass the limit itself.
func (b *batchStream) add(rep any, ran bool) {
	out := &b.x.out
	if b.next > 0 {
		out.WriteByte(',')
	}
	mark := out.Len()
	if !ran {
		rep = &errorReply{Error: b.notRun}
	}
	if err := b.x.enc.Encode(rep); err != nil {
		out.Truncate(mark)
		_ = b.x.enc.Encode(&errorReply{Error: internalError()})
	}
	out.Truncate(out.Len() - 1) // the encoder's newline
	size := int64(out.Len() - mark)
	if ran && size > b.maxReply {
		// One reply past MaxResponseSize: refused as the same call
		// alone would be, without counting against the batch.
		out.Truncate(mark)
		_ = b.x.enc.Encode(&errorReply{Error: b.tooLarge})
		out.Truncate(out.Len() - 1)
		size, ran = 0, false
	}
	if ran && (b.over.Load() || b.written+size+1 > b.limit) {
		b.over.Store(true)
		out.Truncate(mark)
		_ = b.x.enc.Encode(&errorReply{Error: b.dropped})
		out.Truncate(out.Len() - 1)
	} else if ran {
		b.written += size + 1
	}
	b.next++
	if out.Len() >= flushAt {
		b.flush()
	}
}

// flush writes what is gathered.
func (b *batchStream) flush() {
	if !b.failed && b.x.out.Len() > 0 {
		if _, err := b.w.Write(b.x.out.Bytes()); err != nil {
			// The caller is gone: the commands not started yet need not
			// run.
			b.failed = true
			b.over.Store(true)
		}
	}
	b.x.out.Reset()
}
