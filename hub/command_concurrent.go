package hub

import (
	"context"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// Concurrent commands (ClientConfig.Concurrency, Centrifugo's
// client.concurrency). Centrifugo runs the application's handlers of a
// connection's commands in goroutines, up to the limit, and replies as each
// finishes (centrifugo v6.9.1 internal/client/handler.go
// runConcurrentlyIfNeeded); clients match replies to commands by id. Herald
// does the same from the client's command goroutine, which dispatches the
// queued commands in order and keeps its bookkeeping on its own stack: an
// idle client holds nothing more than with commands in sequence.
//
// The order guarantees: commands about one channel run one after another,
// in the order sent, so a subscribe and the publish or unsubscribe behind
// it never overtake each other (Centrifugo refuses a second subscribe to a
// channel while one is in progress, and waits for it before an
// unsubscribe); the other commands (connect, refresh, send, map
// subscriptions, and the server's own tasks) wait for every command before
// them and hold up those after, since they change the whole connection.

// concurrencyKey says how cmd may run beside others: concurrent reports
// whether it may at all, key the channel whose commands it must follow
// ("" for an RPC, which follows nothing).
func concurrencyKey(cmd *protocol.Command) (key string, concurrent bool) {
	switch {
	case cmd == nil || cmd.Id == 0:
		return "", false
	case cmd.Rpc != nil:
		return "", true
	case cmd.Subscribe != nil:
		return cmd.Subscribe.Channel, cmd.Subscribe.Type == requestTypeStream
	case cmd.Unsubscribe != nil:
		return cmd.Unsubscribe.Channel, true
	case cmd.Publish != nil:
		return cmd.Publish.Channel, true
	case cmd.Presence != nil:
		return cmd.Presence.Channel, true
	case cmd.PresenceStats != nil:
		return cmd.PresenceStats.Channel, true
	case cmd.History != nil:
		return cmd.History.Channel, true
	case cmd.SubRefresh != nil:
		return cmd.SubRefresh.Channel, true
	}
	return "", false
}

// runCommandsConcurrently is runCommands with up to limit commands running
// at once.
func (c *Client) runCommandsConcurrently(limit int) {
	// One cancel for every command in flight: closing the client cancels
	// them all (close calls cancelCmd).
	parent, cancelAll := context.WithCancel(c.hub.ctx)
	defer cancelAll()
	var (
		done     = make(chan string, limit) // the key of each command that finished
		inflight int
		busy     map[string]bool // channels with a command in flight
	)
	finish := func() {
		if k := <-done; k != "" {
			delete(busy, k)
		}
		inflight--
	}
	for {
		c.mu.Lock()
		if len(c.tasks) == 0 || c.state == stateClosed {
			if inflight > 0 {
				c.mu.Unlock()
				finish()
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
		concurrent = concurrent && t.fn == nil && c.state == stateConnected
		c.cancelCmd = cancelAll
		c.mu.Unlock()

		if !concurrent {
			for inflight > 0 {
				finish()
			}
		}
		for inflight >= limit || (key != "" && busy[key]) {
			finish()
		}
		c.startHold()
		if !concurrent {
			c.runTask(parent, t)
			continue
		}
		if key != "" {
			if busy == nil {
				busy = make(map[string]bool, limit)
			}
			busy[key] = true
		}
		inflight++
		go func() {
			c.runTask(parent, t)
			done <- key
		}()
	}
}

// startHold marks the client as running a command, so that its writes are
// held back as runCommands holds them for each command.
func (c *Client) startHold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.processing = true
	if c.holdUntil != 0 {
		now := time.Now()
		c.holdUntil = min(now.Add(writeHold).UnixNano(), c.holdSince+int64(maxHold))
		c.resetTimerLocked(now)
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
