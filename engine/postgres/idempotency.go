package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldhq/herald/engine"
)

// Idempotent publishing. A batch that holds publications with idempotency
// keys first claims the keys in its transaction (a row per channel and
// key, see migration 0002); a key another transaction already committed
// is a repeat, answered with the stored position and neither stored nor
// delivered again; a key claimed by a transaction still running makes
// this one wait for it (the row's unique key), so that retries through
// several nodes at once publish once. The claimed keys' positions are
// stored before commit, in the same transaction as the publications.

// idemPlan is what a batch's claim decided. Items absent from every map
// publish as usual.
type idemPlan struct {
	// leaders are the items whose keys this transaction claimed.
	leaders []*item
	// repeats are items whose keys an earlier transaction committed, with
	// the stored position.
	repeats map[*item]engine.StreamPosition
	// followers are items with the same channel and key as an earlier
	// item of the batch; they get its answer.
	followers map[*item]*item
	// pos holds the positions computed for this batch's items (positions).
	pos map[*item]engine.StreamPosition
}

func (p *idemPlan) reset() {
	p.leaders = p.leaders[:0]
	clear(p.repeats)
	clear(p.followers)
	clear(p.pos)
}

// skips reports an item that this batch does not publish.
func (p *idemPlan) skips(it *item) bool {
	if len(p.repeats) == 0 && len(p.followers) == 0 {
		return false
	}
	if _, ok := p.repeats[it]; ok {
		return true
	}
	_, ok := p.followers[it]
	return ok
}

func hasIdempotencyKeys(items []*item) bool {
	for _, it := range items {
		if it.kind == kindPub && it.opts.IdempotencyKey != "" {
			return true
		}
	}
	return false
}

// claimKeys sends b (which begins the transaction) with the claim of the
// batch's keys, and fills w.idem.
func (w *txWriter) claimKeys(ctx context.Context, conn *pgxpool.Conn, b *pgx.Batch, items []*item) error {
	p := &w.idem
	if p.repeats == nil {
		p.repeats = make(map[*item]engine.StreamPosition)
		p.followers = make(map[*item]*item)
		p.pos = make(map[*item]engine.StreamPosition)
	}
	type ck struct{ channel, key string }
	first := make(map[ck]*item)
	var chans, keys []string
	var ttls []int64
	for _, it := range items {
		if it.kind != kindPub || it.opts.IdempotencyKey == "" {
			continue
		}
		k := ck{it.channel, it.opts.IdempotencyKey}
		if lead, ok := first[k]; ok {
			p.followers[it] = lead
			continue
		}
		first[k] = it
		chans, keys = append(chans, k.channel), append(keys, k.key)
		ttls = append(ttls, ceilMS(it.opts.IdempotentResultTTL))
	}
	b.Queue(w.e.sql.idemClaim, chans, keys, ttls)
	b.Queue(w.e.sql.idemRead, chans, keys)
	br := conn.SendBatch(ctx, b)
	for range b.Len() - 2 {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return err
		}
	}
	claimed := make(map[ck]bool, len(chans))
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return fmt.Errorf("claim idempotency keys: %w", err)
	}
	for rows.Next() {
		var k ck
		if err := rows.Scan(&k.channel, &k.key); err != nil {
			rows.Close()
			_ = br.Close()
			return fmt.Errorf("claim idempotency keys: %w", err)
		}
		claimed[k] = true
	}
	rows.Close()
	stored := make(map[ck]engine.StreamPosition, len(chans))
	rows, err = br.Query()
	if err != nil {
		_ = br.Close()
		return fmt.Errorf("read idempotency keys: %w", err)
	}
	for rows.Next() {
		var k ck
		var off int64
		var epoch string
		if err := rows.Scan(&k.channel, &k.key, &off, &epoch); err != nil {
			rows.Close()
			_ = br.Close()
			return fmt.Errorf("read idempotency keys: %w", err)
		}
		stored[k] = engine.StreamPosition{Offset: uint64(off), Epoch: epoch}
	}
	rows.Close()
	if err := br.Close(); err != nil {
		return err
	}
	for k, it := range first {
		if claimed[k] {
			p.leaders = append(p.leaders, it)
		} else {
			p.repeats[it] = stored[k]
		}
	}
	return nil
}

// positions computes the position of every history publication this
// batch publishes, in batch order, as write hands them out.
func (w *txWriter) positions(items []*item) {
	next := make(map[string]int64, len(w.order))
	for _, h := range w.order {
		next[h.name] = h.top - int64(h.count) + 1
	}
	for _, it := range items {
		if it.kind != kindPub || w.idem.skips(it) {
			continue
		}
		var sp engine.StreamPosition
		if it.opts.HasHistory() {
			h := w.hist[it.channel]
			sp = engine.StreamPosition{Offset: uint64(next[it.channel]), Epoch: h.epoch}
			next[it.channel]++
		}
		w.idem.pos[it] = sp
	}
}

// queueStoreKeys queues the write of the claimed keys' positions.
func (w *txWriter) queueStoreKeys(b *pgx.Batch) {
	n := len(w.idem.leaders)
	chans, keys, epochs := make([]string, n), make([]string, n), make([]string, n)
	offsets := make([]int64, n)
	for i, it := range w.idem.leaders {
		sp := w.idem.pos[it]
		chans[i], keys[i], offsets[i], epochs[i] = it.channel, it.opts.IdempotencyKey, int64(sp.Offset), sp.Epoch
	}
	b.Queue(w.e.sql.idemStore, chans, keys, offsets, epochs)
}

// answer is the position write hands to an item the batch did not
// publish itself, and whether it is one.
func (w *txWriter) answer(it *item) (engine.StreamPosition, bool) {
	if sp, ok := w.idem.repeats[it]; ok {
		return sp, true
	}
	lead, ok := w.idem.followers[it]
	if !ok {
		return engine.StreamPosition{}, false
	}
	if sp, ok := w.idem.repeats[lead]; ok {
		return sp, true
	}
	return w.idem.pos[lead], true
}
