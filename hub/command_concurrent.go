package hub

import (
	"context"

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

// inflight is the commands that a client's command goroutine runs beside
// itself. It lives on that goroutine's stack, and its channel and map are
// made at the first concurrent command.
type inflight struct {
	done chan string     // the key of each command that finished
	busy map[string]bool // channels with a command in flight
	n    int
}

// finish waits for one command in flight to finish.
func (f *inflight) finish() {
	if k := <-f.done; k != "" {
		delete(f.busy, k)
	}
	f.n--
}

// drain waits for every command in flight.
func (f *inflight) drain() {
	for f.n > 0 {
		f.finish()
	}
}

// start runs t beside the others once fewer than limit run and none about
// its channel key does.
func (f *inflight) start(c *Client, parent context.Context, t task, key string, limit int) {
	for f.n >= limit || (key != "" && f.busy[key]) {
		f.finish()
	}
	if f.done == nil {
		f.done = make(chan string, limit)
		f.busy = make(map[string]bool, limit)
	}
	if key != "" {
		f.busy[key] = true
	}
	f.n++
	done := f.done // not f, which stays on the caller's stack
	go func() {
		c.runTask(parent, t)
		done <- key
	}()
}
