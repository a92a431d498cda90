package redis

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
)

// The dispatcher of a subscribing connection calls the handler. Messages,
// subscription changes and replays go through one queue in the order they
// happened, so for any channel the handler sees offsets in order. Reads
// from history (gap repair, replay) block only this connection's channels.

type op uint8

const (
	opMessage op = iota
	opControl
	opSubscribe
	opUnsubscribe
	opResync
)

type event struct {
	op      op
	channel string
	payload string
	base    engine.StreamPosition // opSubscribe: the stream's position before subscribing
}

// chanState is what a dispatcher knows of one subscribed channel.
type chanState struct {
	name  string
	last  uint64 // highest offset delivered or known to be covered
	epoch string
}

type dispatcher struct {
	e *Engine

	mu    sync.Mutex
	queue []event
	spare []event
	wake  chan struct{}

	chans map[string]*chanState // owned by run
}

func newDispatcher(e *Engine) *dispatcher {
	return &dispatcher{e: e, wake: make(chan struct{}, 1), chans: make(map[string]*chanState)}
}

func (d *dispatcher) push(ev event) {
	d.mu.Lock()
	d.queue = append(d.queue, ev)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *dispatcher) closing() bool {
	select {
	case <-d.e.closing:
		return true
	default:
		return false
	}
}

func (d *dispatcher) run() {
	for {
		select {
		case <-d.wake:
		case <-d.e.closing:
			return
		}
		for {
			d.mu.Lock()
			batch := d.queue
			d.queue, d.spare = d.spare, nil
			d.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			for i := 0; i < len(batch); {
				if d.closing() {
					return
				}
				if batch[i].op != opResync {
					d.handle(&batch[i])
					i++
					continue
				}
				// Replays after a reconnect come in bursts, one per
				// channel of the connection; they share round trips.
				j := i + 1
				for j < len(batch) && batch[j].op == opResync {
					j++
				}
				d.resync(batch[i:j])
				i = j
			}
			clear(batch)
			d.mu.Lock()
			d.spare = batch[:0]
			d.mu.Unlock()
		}
	}
}

func (d *dispatcher) handle(ev *event) {
	switch ev.op {
	case opSubscribe:
		if d.chans[ev.channel] == nil {
			d.chans[ev.channel] = &chanState{name: ev.channel, last: ev.base.Offset, epoch: ev.base.Epoch}
		}
	case opUnsubscribe:
		delete(d.chans, ev.channel)
	case opControl:
		d.e.handler.HandleControl([]byte(ev.payload))
	case opMessage:
		d.deliver(ev)
	}
}

func (d *dispatcher) deliver(ev *event) {
	st := d.chans[ev.channel]
	if st == nil {
		return // unsubscribed
	}
	m, err := parseMessage(ev.payload)
	if err != nil {
		d.e.stats.malformed.Add(1)
		d.e.log.Error("undecodable pub/sub message", "channel", st.name, "error", err)
		return
	}
	h := d.e.handler
	switch m.kind {
	case msgJoin:
		h.HandleJoin(st.name, m.info)
	case msgLeave:
		h.HandleLeave(st.name, m.info)
	case msgPub:
		h.HandlePublication(st.name, m.pub, engine.StreamPosition{})
	case msgHistoryPub:
		d.deliverPub(st, m)
	}
}

// deliverPub hands a live publication to the handler, first refilling any
// gap before it from the stream.
func (d *dispatcher) deliverPub(st *chanState, m message) {
	if m.epoch != st.epoch {
		if st.epoch != "" {
			d.e.log.Info("channel stream restarted with a new epoch", "channel", st.name)
		}
		st.epoch, st.last = strings.Clone(m.epoch), 0
	}
	if m.offset <= st.last {
		return // delivered by a replay, or older than the subscription
	}
	if m.offset > st.last+1 {
		d.e.stats.gapRepairs.Add(1)
		d.fill(st, m.offset-1)
	}
	d.e.handler.HandlePublication(st.name, m.pub, engine.StreamPosition{Offset: m.offset, Epoch: st.epoch})
	st.last = m.offset
}

// fill delivers st's publications after st.last up to upto from the stream.
func (d *dispatcher) fill(st *chanState, upto uint64) {
	for st.last < upto {
		var r rangeReply
		if !d.retry(func(ctx context.Context) (err error) {
			r, err = d.e.readRange(ctx, d.e.client, st.name, st.last, upto)
			return err
		}) {
			return // closing
		}
		if r.epoch != st.epoch || len(r.pubs) == 0 {
			break // the stream went away or restarted again meanwhile
		}
		d.deliverFrom(st, r.pubs, upto)
		if len(r.pubs) < d.e.opts.ReplayBatch {
			break
		}
	}
	d.skipTo(st, upto)
}

// deliverFrom delivers pubs (ascending) above st.last and up to upto.
func (d *dispatcher) deliverFrom(st *chanState, pubs []*engine.Publication, upto uint64) {
	for _, p := range pubs {
		if p.Offset <= st.last || p.Offset > upto {
			continue
		}
		d.skipTo(st, p.Offset-1)
		d.e.handler.HandlePublication(st.name, p, engine.StreamPosition{Offset: p.Offset, Epoch: st.epoch})
		d.e.stats.replayed.Add(1)
		st.last = p.Offset
	}
}

// skipTo moves st.last up to offset, counting what history no longer had.
func (d *dispatcher) skipTo(st *chanState, offset uint64) {
	if offset <= st.last {
		return
	}
	missing := offset - st.last
	d.e.stats.lost.Add(missing)
	d.e.log.Warn("publications missing from history, subscribers will have to recover",
		"channel", st.name, "after", st.last, "upto", offset, "missing", missing)
	st.last = offset
}

// resyncChunk bounds the channels whose replay reads share one pipeline.
const resyncChunk = 500

// resync replays what the node may have missed on each channel of evs
// while its subscribing connection was down.
func (d *dispatcher) resync(evs []event) {
	list := make([]*chanState, 0, len(evs))
	seen := make(map[*chanState]bool, len(evs))
	for _, ev := range evs {
		if st := d.chans[ev.channel]; st != nil && !seen[st] {
			seen[st] = true
			list = append(list, st)
		}
	}
	for len(list) > 0 {
		n := min(len(list), resyncChunk)
		d.resyncChunk(list[:n])
		list = list[n:]
	}
}

func (d *dispatcher) resyncChunk(list []*chanState) {
	replies := make([]rangeReply, len(list))
	if !d.retry(func(ctx context.Context) error {
		cmds, err := d.e.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, st := range list {
				d.e.rangeCmd(ctx, p, st.name, st.last, 0)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i, cmd := range cmds {
			if replies[i], err = parseRange(cmd.(*goredis.Cmd).Val()); err != nil {
				return fmt.Errorf("replay %q: %w", list[i].name, err)
			}
		}
		return nil
	}) {
		return
	}
	for i, st := range list {
		if d.applyReplay(st, replies[i]) {
			d.catchUp(st)
		}
	}
}

// catchUp reads and delivers st's stream to its top.
func (d *dispatcher) catchUp(st *chanState) {
	for {
		var r rangeReply
		if !d.retry(func(ctx context.Context) (err error) {
			r, err = d.e.readRange(ctx, d.e.client, st.name, st.last, 0)
			return err
		}) {
			return
		}
		if !d.applyReplay(st, r) {
			return
		}
	}
}

// applyReplay delivers one replay read and reports whether more must be
// read: the stream has a new epoch (start again from offset 0) or the read
// was cut at the batch size.
func (d *dispatcher) applyReplay(st *chanState, r rangeReply) bool {
	if r.epoch == "" {
		return false // no stream: nothing was published since it went away
	}
	if r.epoch != st.epoch {
		if st.epoch != "" {
			d.e.log.Info("channel stream restarted with a new epoch", "channel", st.name)
		}
		st.epoch, st.last = r.epoch, 0
		return r.top > 0
	}
	d.deliverFrom(st, r.pubs, r.top)
	if len(r.pubs) >= d.e.opts.ReplayBatch && st.last < r.top {
		return true
	}
	d.skipTo(st, r.top)
	return false
}

// retry runs f until it succeeds or the engine closes, backing off between
// failures; it reports whether f succeeded. Delivery cannot skip a read
// without losing order, so it waits out outages instead of giving up.
func (d *dispatcher) retry(f func(ctx context.Context) error) bool {
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(d.e.bgCtx, d.e.opts.ReadTimeout)
		err := f(ctx)
		cancel()
		if err == nil {
			if attempt > 1 {
				d.e.log.Info("history read for delivery succeeded after retries", "attempts", attempt)
			}
			return true
		}
		if d.closing() {
			return false
		}
		level := slog.LevelDebug
		if attempt == 1 {
			level = slog.LevelWarn
		}
		wait := d.e.backoff(attempt)
		d.e.log.Log(context.Background(), level, "history read for delivery failed, retrying", "error", err, "in", wait)
		if !d.e.pause(wait) {
			return false
		}
	}
}
