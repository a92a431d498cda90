package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
)

// The listener never calls the handler. It decodes notifications and
// appends their records to the queue of the shard that owns the channel;
// each shard's goroutine delivers them in queue order, which for one
// channel is offset order. A shard also repairs gaps and replays after a
// reconnect, blocking only its own channels while it reads the database.

type eventOp uint8

const (
	opRecord eventOp = iota
	opSubscribe
	opUnsubscribe
	opResync
)

type event struct {
	op      eventOp
	rec     record
	channel string                // opSubscribe, opUnsubscribe
	base    engine.StreamPosition // opSubscribe: the stream's position when it was read
	gen     uint64                // opSubscribe: listener generation before base was read
}

// chanState is what a shard knows of one subscribed channel.
type chanState struct {
	name  string // the channel, owned by the engine (records point into payloads)
	last  uint64 // highest offset delivered or known to be covered
	epoch string
}

type shard struct {
	e *Engine
	// filter drops records of channels this node is not subscribed to;
	// the control shard takes everything.
	filter bool

	mu    sync.Mutex
	subs  map[string]struct{} // the listener's view of subscriptions
	queue []event
	spare []event
	wake  chan struct{}
	quit  chan struct{}

	chans map[string]*chanState // owned by run
}

func newShard(e *Engine, filter bool) *shard {
	return &shard{
		e: e, filter: filter,
		subs:  make(map[string]struct{}),
		wake:  make(chan struct{}, 1),
		quit:  make(chan struct{}),
		chans: make(map[string]*chanState),
	}
}

func (s *shard) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// offer queues a record from the listener unless nobody here wants it.
func (s *shard) offer(r record) {
	s.mu.Lock()
	if s.filter {
		if _, ok := s.subs[r.channel]; !ok {
			s.mu.Unlock()
			return
		}
	}
	s.queue = append(s.queue, event{op: opRecord, rec: r})
	s.mu.Unlock()
	s.signal()
}

func (s *shard) subscribe(ch string, base engine.StreamPosition, gen uint64) {
	s.mu.Lock()
	s.subs[ch] = struct{}{}
	s.queue = append(s.queue, event{op: opSubscribe, channel: ch, base: base, gen: gen})
	s.mu.Unlock()
	s.signal()
}

func (s *shard) unsubscribe(ch string) {
	s.mu.Lock()
	delete(s.subs, ch)
	s.queue = append(s.queue, event{op: opUnsubscribe, channel: ch})
	s.mu.Unlock()
	s.signal()
}

// resync queues a replay of every subscribed channel. The listener calls
// it after it reconnected and before it reads, so the replay comes before
// any notification of the new connection.
func (s *shard) resync() {
	s.mu.Lock()
	s.queue = append(s.queue, event{op: opResync})
	s.mu.Unlock()
	s.signal()
}

func (s *shard) depth() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

func (s *shard) stop() { close(s.quit) }

func (s *shard) stopped() bool {
	select {
	case <-s.quit:
		return true
	default:
		return false
	}
}

func (s *shard) run() {
	for {
		select {
		case <-s.wake:
		case <-s.quit:
			return
		}
		for {
			s.mu.Lock()
			batch := s.queue
			s.queue, s.spare = s.spare, nil
			s.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			for i := range batch {
				if s.stopped() {
					return
				}
				s.handle(&batch[i])
			}
			clear(batch)
			s.mu.Lock()
			s.spare = batch[:0]
			s.mu.Unlock()
		}
	}
}

func (s *shard) handle(ev *event) {
	switch ev.op {
	case opSubscribe:
		st := s.chans[ev.channel]
		if st == nil {
			st = &chanState{name: ev.channel, last: ev.base.Offset, epoch: ev.base.Epoch}
			s.chans[ev.channel] = st
		}
		// A reconnect after the position was read may have replayed the
		// shard's channels before this one was among them.
		if ev.gen != s.e.listenerGen.Load() {
			s.replay([]*chanState{st})
		}
	case opUnsubscribe:
		delete(s.chans, ev.channel)
	case opResync:
		all := make([]*chanState, 0, len(s.chans))
		for _, st := range s.chans {
			all = append(all, st)
		}
		s.replay(all)
	case opRecord:
		s.deliver(ev.rec)
	}
}

func (s *shard) deliver(r record) {
	if r.kind == kindRef {
		var ok bool
		if r, ok = s.fetchSpilled(r); !ok {
			return
		}
	}
	h := s.e.handler
	if r.kind == kindControl {
		h.HandleControl(r.data)
		return
	}
	st := s.chans[r.channel]
	if st == nil {
		return
	}
	switch r.kind {
	case kindJoin:
		h.HandleJoin(st.name, r.info)
	case kindLeave:
		h.HandleLeave(st.name, r.info)
	case kindPub:
		s.deliverPub(st, r)
	}
}

// deliverPub hands a live publication to the handler, first refilling any
// gap before it from the history table.
func (s *shard) deliverPub(st *chanState, r record) {
	if r.offset == 0 {
		s.e.handler.HandlePublication(st.name, r.pub, engine.StreamPosition{})
		return
	}
	if r.epoch != st.epoch {
		if st.epoch != "" {
			s.e.log.Info("channel stream restarted with a new epoch", "channel", st.name)
		}
		st.epoch, st.last = strings.Clone(r.epoch), 0
	}
	if r.offset <= st.last {
		return // delivered by a replay, or older than the subscription
	}
	if r.offset > st.last+1 {
		s.e.metrics.gapRepairs.Inc()
		s.repair(st, r.offset)
	}
	r.pub.Offset = r.offset
	s.e.handler.HandlePublication(st.name, r.pub, engine.StreamPosition{Offset: r.offset, Epoch: st.epoch})
	st.last = r.offset
}

// repair delivers st's publications between st.last and upto (exclusive)
// from the history table.
func (s *shard) repair(st *chanState, upto uint64) {
	var pubs []*engine.Publication
	err := s.e.retry(s.quit, func(ctx context.Context) error {
		rows, err := s.e.qPool.Query(ctx, s.e.sql.historyBetween, st.name, int64(st.last), int64(upto), st.epoch)
		if err != nil {
			return err
		}
		pubs, err = pgx.CollectRows(rows, scanHistoryRow)
		return err
	})
	if err != nil {
		return // closing
	}
	want := upto - st.last - 1
	for _, p := range pubs {
		s.e.handler.HandlePublication(st.name, p, engine.StreamPosition{Offset: p.Offset, Epoch: st.epoch})
	}
	s.e.metrics.replayed.Add(float64(len(pubs)))
	if missing := want - uint64(len(pubs)); missing > 0 {
		s.e.metrics.lost.Add(float64(missing))
		s.e.log.Warn("publications missing from history, subscribers will have to recover",
			"channel", st.name, "after", st.last, "before", upto, "missing", missing)
	}
	st.last = upto - 1
}

// replayChunk bounds the channels of one replay query.
const replayChunk = 1000

// replay compares each channel's position with the streams table and
// delivers what the node missed, in offset order, before anything queued
// after it.
func (s *shard) replay(list []*chanState) {
	for len(list) > 0 {
		n := min(len(list), replayChunk)
		s.replayChunk(list[:n])
		list = list[n:]
	}
}

func (s *shard) replayChunk(list []*chanState) {
	names := make([]string, len(list))
	for i, st := range list {
		names[i] = st.name
	}
	type top struct {
		offset int64
		epoch  string
	}
	tops := make(map[string]top, len(list))
	err := s.e.retry(s.quit, func(ctx context.Context) error {
		clear(tops)
		rows, err := s.e.qPool.Query(ctx, s.e.sql.streamTops, names)
		if err != nil {
			return err
		}
		var ch string
		var t top
		_, err = pgx.ForEachRow(rows, []any{&ch, &t.offset, &t.epoch}, func() error {
			tops[ch] = t
			return nil
		})
		return err
	})
	if err != nil {
		return
	}
	var chans []string
	var after, upto []int64
	for _, st := range list {
		t, ok := tops[st.name]
		if !ok {
			continue
		}
		if t.epoch != st.epoch {
			if st.epoch != "" {
				s.e.log.Info("channel stream restarted with a new epoch", "channel", st.name)
			}
			st.epoch, st.last = t.epoch, 0
		}
		if uint64(t.offset) > st.last {
			chans = append(chans, st.name)
			after = append(after, int64(st.last))
			upto = append(upto, t.offset)
		}
	}
	if len(chans) == 0 {
		return
	}
	type row struct {
		ch  string
		pub *engine.Publication
	}
	var got []row
	err = s.e.retry(s.quit, func(ctx context.Context) error {
		got = got[:0]
		rows, err := s.e.qPool.Query(ctx, s.e.sql.historyReplay, chans, after, upto)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ch string
			p, err := scanHistoryRowWith(rows, &ch)
			if err != nil {
				return err
			}
			got = append(got, row{ch: ch, pub: p})
		}
		return rows.Err()
	})
	if err != nil {
		return
	}
	for _, r := range got {
		st := s.chans[r.ch]
		if st == nil || r.pub.Offset <= st.last {
			continue
		}
		s.e.handler.HandlePublication(st.name, r.pub, engine.StreamPosition{Offset: r.pub.Offset, Epoch: st.epoch})
		st.last = r.pub.Offset
	}
	s.e.metrics.replayed.Add(float64(len(got)))
	for i, ch := range chans {
		st := s.chans[ch]
		if st == nil {
			continue
		}
		if want := uint64(upto[i]); st.last < want {
			s.e.metrics.lost.Add(float64(want - st.last))
			s.e.log.Warn("publications missing from history after reconnect, subscribers will have to recover",
				"channel", ch, "after", st.last, "upto", want)
			st.last = want
		}
	}
}

// fetchSpilled replaces a reference with the record it points to. A
// publication whose spilled copy is gone is read from the history table
// when it has an offset.
func (s *shard) fetchSpilled(ref record) (record, bool) {
	var body []byte
	err := s.e.retry(s.quit, func(ctx context.Context) error {
		err := s.e.qPool.QueryRow(ctx, s.e.sql.readSpill, ref.spillID).Scan(&body)
		if errors.Is(err, pgx.ErrNoRows) {
			body = nil
			return nil
		}
		return err
	})
	if err != nil {
		return record{}, false
	}
	if body != nil {
		r, err := decodeSpilled(body, ref)
		if err != nil {
			s.e.metrics.malformed.Inc()
			s.e.log.Error("undecodable spilled record", "id", ref.spillID, "error", err)
			return record{}, false
		}
		return r, true
	}
	if ref.offset > 0 && s.chans[ref.channel] != nil {
		var pubs []*engine.Publication
		err := s.e.retry(s.quit, func(ctx context.Context) error {
			rows, err := s.e.qPool.Query(ctx, s.e.sql.historyBetween, ref.channel, int64(ref.offset)-1, int64(ref.offset)+1, ref.epoch)
			if err != nil {
				return err
			}
			pubs, err = pgx.CollectRows(rows, scanHistoryRow)
			return err
		})
		if err != nil {
			return record{}, false
		}
		if len(pubs) == 1 {
			return record{kind: kindPub, channel: ref.channel, offset: ref.offset, epoch: ref.epoch, pub: pubs[0]}, true
		}
	}
	s.e.metrics.lost.Inc()
	s.e.log.Warn("spilled record expired before it was read", "channel", ref.channel, "id", ref.spillID)
	return record{}, false
}

// retry runs f until it succeeds or quit closes, backing off between
// failures. Delivery cannot skip a database read without losing order,
// so it waits out outages instead of giving up.
func (e *Engine) retry(quit <-chan struct{}, f func(ctx context.Context) error) error {
	wait := e.opts.ReconnectMin
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(e.bgCtx, e.opts.WriteTimeout)
		err := f(ctx)
		cancel()
		if err == nil {
			if attempt > 0 {
				e.log.Info("database read for delivery succeeded after retries", "attempts", attempt+1)
			}
			return nil
		}
		select {
		case <-quit:
			return fmt.Errorf("engine closing: %w", err)
		default:
		}
		level := slog.LevelDebug
		if attempt == 0 {
			level = slog.LevelWarn
		}
		e.log.Log(ctx, level, "database read for delivery failed, retrying", "error", err, "in", wait)
		select {
		case <-quit:
			return fmt.Errorf("engine closing: %w", err)
		case <-time.After(jitter(wait)):
		}
		wait = min(2*wait, e.opts.ReconnectMax)
	}
}
