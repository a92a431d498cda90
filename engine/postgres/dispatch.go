package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/sequence"
)

// The listener never calls the handler. It decodes notifications and
// queues their records on the shard that owns the channel (control
// messages on a shard of their own). A shard is a sequence.Sequencer: its
// goroutine delivers the records in queue order, which for one channel is
// offset order, refilling gaps and replaying after a reconnect from the
// history table, and blocking only its own channels while it reads.

// shard is one delivery queue and the goroutine that empties it.
type shard = sequence.Sequencer[record]

// replayChunk bounds the channels of one replay query.
const replayChunk = 1000

func (e *Engine) newShard() *shard {
	var s *shard
	s = sequence.New(sequence.Config[record]{
		Resolve:     func(_ string, r record) (sequence.Message, bool) { return e.resolve(s, r) },
		History:     historyReader{e},
		Metrics:     e.metrics,
		Log:         e.log,
		ReadTimeout: e.opts.WriteTimeout,
		Backoff:     e.backoff,
		ReplayChunk: replayChunk,
	})
	return s
}

// resolve turns a record into what the handler is given, first reading a
// spilled record back from the database.
func (e *Engine) resolve(s *shard, r record) (sequence.Message, bool) {
	if r.kind == kindRef {
		var ok bool
		if r, ok = e.fetchSpilled(s, r); !ok {
			return sequence.Message{}, false
		}
	}
	switch r.kind {
	case kindControl:
		return sequence.Message{Kind: sequence.Control, Data: r.data}, true
	case kindJoin:
		return sequence.Message{Kind: sequence.Join, Channel: r.channel, Info: r.info}, true
	case kindLeave:
		return sequence.Message{Kind: sequence.Leave, Channel: r.channel, Info: r.info}, true
	case kindPub:
		return sequence.Message{Kind: sequence.Publication, Channel: r.channel, Epoch: r.epoch, Pub: r.pub}, true
	}
	return sequence.Message{}, false
}

// fetchSpilled replaces a reference with the record it points to. A
// publication whose spilled copy is gone is read from the history table
// when it has an offset; read from there, it has no ExceptClient.
func (e *Engine) fetchSpilled(s *shard, ref record) (record, bool) {
	var body []byte
	if !s.Retry(func(ctx context.Context) error {
		err := e.qPool.QueryRow(ctx, e.sql.readSpill, ref.spillID).Scan(&body)
		if errors.Is(err, pgx.ErrNoRows) {
			body = nil
			return nil
		}
		return err
	}) {
		return record{}, false
	}
	if body != nil {
		r, err := decodeSpilled(body, ref)
		if err != nil {
			e.metrics.malformed.Inc()
			e.log.Error("undecodable spilled record", "id", ref.spillID, "error", err)
			return record{}, false
		}
		return r, true
	}
	if ref.offset > 0 && s.Subscribed(ref.channel) {
		var pubs []*engine.Publication
		if !s.Retry(func(ctx context.Context) (err error) {
			pubs, _, err = historyReader{e}.Between(ctx, ref.channel, ref.epoch, ref.offset-1, ref.offset)
			return err
		}) {
			return record{}, false
		}
		if len(pubs) == 1 {
			return record{kind: kindPub, channel: ref.channel, offset: ref.offset, epoch: ref.epoch, pub: pubs[0]}, true
		}
	}
	e.metrics.lost.Inc()
	e.log.Warn("spilled record expired before it was read", "channel", ref.channel, "id", ref.spillID)
	return record{}, false
}

// historyReader is the history table as the shards read it. Publications
// read from it have no ExceptClient: the table does not keep it.
type historyReader struct{ e *Engine }

// Between reads the publications of one stream between two offsets.
func (h historyReader) Between(ctx context.Context, ch, epoch string, after, upto uint64) ([]*engine.Publication, bool, error) {
	rows, err := h.e.qPool.Query(ctx, h.e.sql.historyBetween, ch, clampOffset(after), clampOffset(upto)+1, epoch)
	if err != nil {
		return nil, false, err
	}
	pubs, err := pgx.CollectRows(rows, scanHistoryRow)
	return pubs, false, err
}

// Tails reads the streams' positions, then in one more query everything
// each stream holds beyond its cursor: from the stream's start when its
// epoch changed.
func (h historyReader) Tails(ctx context.Context, cursors []sequence.Cursor) ([]sequence.Tail, error) {
	names := make([]string, len(cursors))
	for i, c := range cursors {
		names[i] = c.Channel
	}
	tops := make(map[string]engine.StreamPosition, len(cursors))
	rows, err := h.e.qPool.Query(ctx, h.e.sql.streamTops, names)
	if err != nil {
		return nil, err
	}
	var ch string
	var top int64
	var epoch string
	if _, err := pgx.ForEachRow(rows, []any{&ch, &top, &epoch}, func() error {
		tops[ch] = engine.StreamPosition{Offset: uint64(top), Epoch: epoch}
		return nil
	}); err != nil {
		return nil, err
	}
	tails := make([]sequence.Tail, len(cursors))
	index := make(map[string]int, len(cursors))
	var chans []string
	var after, upto []int64
	for i, c := range cursors {
		t, ok := tops[c.Channel]
		if !ok {
			continue // no stream
		}
		tails[i] = sequence.Tail{Top: t.Offset, Epoch: t.Epoch}
		from := c.After
		if t.Epoch != c.Epoch {
			from = 0
		}
		if t.Offset > from {
			index[c.Channel] = i
			chans = append(chans, c.Channel)
			after = append(after, clampOffset(from))
			upto = append(upto, clampOffset(t.Offset))
		}
	}
	if len(chans) == 0 {
		return tails, nil
	}
	rows, err = h.e.qPool.Query(ctx, h.e.sql.historyReplay, chans, after, upto)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		p, err := scanHistoryRowWith(rows, &ch)
		if err != nil {
			return nil, err
		}
		if i, ok := index[ch]; ok {
			tails[i].Pubs = append(tails[i].Pubs, p)
		}
	}
	return tails, rows.Err()
}
