package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/sequence"
)

// The dispatcher of a subscribing connection calls the handler. It is a
// sequence.Sequencer: messages, subscription changes and replays go
// through one queue in the order they happened, so for any channel the
// handler sees offsets in order, and gaps and re-subscriptions are
// refilled from the channel's stream. Reads from the streams block only
// this connection's channels. Payloads are decoded on the dispatcher's
// goroutine, so the connection's reader only queues them.

// dispatcher is a subscribing connection's delivery queue; its messages
// are pub/sub payloads.
type dispatcher = sequence.Sequencer[string]

// resyncChunk bounds the channels whose replay reads share one pipeline.
const resyncChunk = 500

func (e *Engine) newDispatcher() *dispatcher {
	return sequence.New(sequence.Config[string]{
		Resolve:     e.resolve,
		History:     streamReader{e},
		Metrics:     &e.stats,
		Log:         e.log,
		ReadTimeout: e.opts.ReadTimeout,
		Backoff:     e.backoff,
		ReplayChunk: resyncChunk,
	})
}

// resolve decodes a pub/sub payload of channel ch, or a control message
// when ch is empty.
func (e *Engine) resolve(ch, payload string) (sequence.Message, bool) {
	if ch == "" {
		return sequence.Message{Kind: sequence.Control, Data: []byte(payload)}, true
	}
	m, err := parseMessage(payload)
	if err != nil {
		e.stats.malformed.Add(1)
		e.log.Error("undecodable pub/sub message", "channel", ch, "error", err)
		return sequence.Message{}, false
	}
	switch m.kind {
	case msgJoin:
		return sequence.Message{Kind: sequence.Join, Channel: ch, Info: m.info}, true
	case msgLeave:
		return sequence.Message{Kind: sequence.Leave, Channel: ch, Info: m.info}, true
	default: // msgPub, msgHistoryPub: parseMessage set the offset, if any
		return sequence.Message{Kind: sequence.Publication, Channel: ch, Epoch: m.epoch, Pub: m.pub}, true
	}
}

// GapRepaired, Replayed and Lost make counters the dispatchers'
// sequence.Metrics.
func (c *counters) GapRepaired()   { c.gapRepairs.Add(1) }
func (c *counters) Replayed(n int) { c.replayed.Add(uint64(n)) }
func (c *counters) Lost(n uint64)  { c.lost.Add(n) }

// streamReader is the channels' streams as the dispatchers read them,
// at most ReplayBatch publications per read.
type streamReader struct{ e *Engine }

// Between reads one stream's publications between two offsets.
func (r streamReader) Between(ctx context.Context, ch, epoch string, after, upto uint64) ([]*engine.Publication, bool, error) {
	reply, err := r.e.readRange(ctx, r.e.client, ch, after, upto)
	if err != nil || reply.epoch != epoch {
		return nil, false, err // an error, or the stream went away or restarted
	}
	return reply.pubs, len(reply.pubs) >= r.e.opts.ReplayBatch, nil
}

// Tails reads the streams after their cursors, in one pipeline when there
// are several. A stream with another epoch is left for the dispatcher to
// read again from its start.
func (r streamReader) Tails(ctx context.Context, cursors []sequence.Cursor) ([]sequence.Tail, error) {
	replies := make([]rangeReply, len(cursors))
	if len(cursors) == 1 {
		reply, err := r.e.readRange(ctx, r.e.client, cursors[0].Channel, cursors[0].After, 0)
		if err != nil {
			return nil, err
		}
		replies[0] = reply
	} else {
		cmds, err := r.e.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, c := range cursors {
				r.e.rangeCmd(ctx, p, c.Channel, c.After, 0)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for i, cmd := range cmds {
			if replies[i], err = parseRange(cmd.(*goredis.Cmd).Val()); err != nil {
				return nil, fmt.Errorf("replay %q: %w", cursors[i].Channel, err)
			}
		}
	}
	tails := make([]sequence.Tail, len(cursors))
	for i, reply := range replies {
		t := sequence.Tail{Top: reply.top, Epoch: reply.epoch}
		if reply.epoch == cursors[i].Epoch {
			t.Pubs, t.More = reply.pubs, len(reply.pubs) >= r.e.opts.ReplayBatch
		} else {
			t.More = reply.top > 0
		}
		tails[i] = t
	}
	return tails, nil
}
