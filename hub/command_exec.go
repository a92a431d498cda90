package hub

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/heraldhq/herald/protocol"
)

// Where commands execute.
//
// A transport hands frames to HandleFrame on its shared read workers (a
// handful of goroutines serving every connection), so HandleFrame only
// decodes: pongs are handled there (they touch nothing but the client's
// timer), and every other command is queued on the client. A goroutine of
// the client's own, started when its queue goes from empty to not empty and
// gone when it is empty again, runs the queued commands one after another,
// so replies keep the order of the commands, a command that waits on the
// engine or on an application handler holds up only its own client, and an
// idle client still parks no goroutine. With ClientConfig.Concurrency above
// 1 that goroutine runs several commands at once instead
// (command_concurrent.go).

// maxPendingCommands bounds the commands a client may have waiting behind
// the one that runs; a client that sends more without waiting for replies
// is closed with 3013 (too many requests) instead of growing its queue
// without end.
const maxPendingCommands = 1024

// Replies and pushes queued while commands run are held back so that they
// go out together (a subscribe reply with the publications it recovered
// and the client's own join, a publish reply with the publication), as the
// reference server batches them. The hold lasts until the client's queue
// of commands is empty, but at most writeHold past the start of the
// command that runs and maxHold in all: then the writer sends what is
// queued, so that pushes and pings never wait long behind a slow command,
// nor behind a client that keeps sending commands.
const (
	writeHold = 10 * time.Millisecond
	maxHold   = 50 * time.Millisecond
)

// writeHolds are the node's writeHold and maxHold. They are the Hub's, not
// the constants themselves, so that a test of the frames commands share
// can lengthen them: on a loaded machine (the race detector, tests in
// parallel on two cores) a command can run past 10 ms, and the hold then
// ends as designed, splitting what the test asserts shares a frame.
// Atomic: a test sets them while the hub runs.
type writeHolds struct{ each, total atomic.Int64 }

func (w *writeHolds) init() {
	w.each.Store(int64(writeHold))
	w.total.Store(int64(maxHold))
}

// HandleFrame handles one frame of commands from the transport. It returns
// false when the connection is closing and reading should stop. It never
// waits on the engine or an application handler.
func (c *Client) HandleFrame(frame []byte) bool {
	c.hub.metrics.bytesIn.Add(float64(len(frame)))
	cmds, err := protocol.DecodeCommands(c.proto, frame)
	// A frame with no command at all, empty or (JSON) only whitespace, is
	// refused: the reference refuses the empty one, and a blank one is
	// the same thing padded.
	if err == nil && len(cmds) == 0 {
		err = errors.New("empty frame: no command in it")
	}
	if err != nil {
		c.logger().Info("malformed frame", "error", err)
		c.close(newDisconnect(protocol.DisconnectBadRequest))
		return false
	}
	// The decoded commands own their bytes (the decoders copy), so they
	// outlive frame, which the transport reuses.
	c.mu.Lock()
	if c.state == stateClosed {
		c.mu.Unlock()
		return false
	}
	start := false
	for _, cmd := range cmds {
		if isPong(cmd) {
			if d := c.handlePongLocked(); d != nil {
				c.mu.Unlock()
				c.close(d)
				return false
			}
			continue
		}
		if len(c.tasks) >= maxPendingCommands {
			c.mu.Unlock()
			c.logger().Info("too many commands waiting", "limit", maxPendingCommands)
			c.close(newDisconnect(protocol.DisconnectTooManyRequests))
			return false
		}
		start = c.queueTaskLocked(task{cmd: cmd}) || start
	}
	c.mu.Unlock()
	if start {
		go c.runCommands()
	}
	return true
}

// commandQueue is the client's command execution: the tasks waiting to
// run, whether a goroutine is running them, the cancel of the one that
// runs, and the command rate limit.
type commandQueue struct {
	tasks     []task
	cancelCmd context.CancelFunc
	// limiter bounds the command rate (nil: no limit); overLimit counts
	// commands refused in a row, up to ClientConfig.CommandRateBurst.
	limiter   *rate.Limiter
	overLimit atomic.Int32 // atomic: commands may run concurrently (command_concurrent.go)
	running   bool
}

// task is one thing to run on the client's command goroutine: a command
// it sent, or work the server does on it (a subscription the server API
// made, say), which then keeps its place among the client's commands and
// gets the same context.
type task struct {
	cmd *protocol.Command
	fn  func(ctx context.Context)
}

// queueTaskLocked appends t to the client's tasks and reports whether the
// caller must start the goroutine that runs them (none runs yet).
func (c *Client) queueTaskLocked(t task) (start bool) {
	c.tasks = append(c.tasks, t)
	if c.running {
		return false
	}
	c.running = true
	return true
}

// runServerTask queues fn to run on the client's command goroutine; a
// closed client drops it.
func (c *Client) runServerTask(fn func(ctx context.Context)) {
	c.mu.Lock()
	if c.state == stateClosed {
		c.mu.Unlock()
		return
	}
	start := c.queueTaskLocked(task{fn: fn})
	c.mu.Unlock()
	if start {
		go c.runCommands()
	}
}

// isPong reports a command without id that is not a send: the reference
// server takes it as the answer to its ping.
func isPong(cmd *protocol.Command) bool { return cmd.Id == 0 && cmd.Send == nil }

// runCommands executes the client's queued commands in order until the
// queue is empty or the client closes; with ClientConfig.Concurrency above
// 1, several at once (command_concurrent.go).
func (c *Client) runCommands() {
	limit := c.hub.client.Concurrency
	// One cancel for the commands of this run: closing the client cancels
	// the one that runs, or all of them (close calls cancelCmd).
	parent, cancelAll := context.WithCancel(c.hub.ctx)
	defer cancelAll()
	var others inflight
	for {
		c.mu.Lock()
		if len(c.tasks) == 0 || c.state == stateClosed {
			if others.n > 0 {
				c.mu.Unlock()
				others.finish()
				continue
			}
			c.tasks = nil
			c.running = false
			c.cancelCmd = nil
			c.releaseHoldLocked()
			c.mu.Unlock()
			return
		}
		t := c.tasks[0]
		c.tasks[0] = task{}
		c.tasks = c.tasks[1:]
		key, concurrent := concurrencyKey(t.cmd)
		concurrent = concurrent && limit > 1 && t.fn == nil && c.state == stateConnected
		c.processing = true
		if c.holdUntil != 0 {
			// Writes are held already: give this command its own
			// writeHold, within maxHold.
			now := time.Now()
			c.holdUntil = min(now.UnixNano()+c.hub.holds.each.Load(), c.holdSince+c.hub.holds.total.Load())
			c.resetTimerLocked(now)
		}
		c.cancelCmd = cancelAll
		c.mu.Unlock()

		if concurrent {
			others.start(c, parent, t, key, limit)
			continue
		}
		others.drain()
		c.runTask(parent, t)
	}
}

// runTask runs one task with the command timeout, under parent, and closes
// the client when the command says so.
func (c *Client) runTask(parent context.Context, t task) {
	ctx, cancel := context.WithTimeout(parent, c.hub.client.CommandTimeout)
	defer cancel()
	if t.fn != nil {
		t.fn(ctx)
		return
	}
	if d := c.handleCommand(ctx, t.cmd); d != nil {
		c.mu.Lock()
		c.releaseHoldLocked()
		c.mu.Unlock()
		c.close(d)
	}
}

// releaseHoldLocked lets the writer send what commands have queued.
func (c *Client) releaseHoldLocked() {
	c.processing = false
	c.holdUntil, c.holdSince = 0, 0
	c.scheduleFlushLocked()
}

// holdLocked is called when a message is queued while commands run: the
// client's timer will release the hold after writeHold if the commands are
// still running then.
func (c *Client) holdLocked() {
	if c.holdUntil != 0 {
		return
	}
	now := time.Now()
	c.holdSince = now.UnixNano()
	c.holdUntil = c.holdSince + c.hub.holds.each.Load()
	c.resetTimerLocked(now)
}
