package postgres

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldhq/herald/engine"
)

// headerReserve bounds a payload's header record ('n', length, token), so
// that a record that fits beside it never needs a payload of its own.
const headerReserve = 48

// positionReserve bounds what an offset and an epoch add to a publication
// record encoded before they are known.
const positionReserve = 48

// maxAttempts bounds the tries of one batch after errors that leave
// nothing committed (deadlocks, serialization failures, a request that
// never reached the server).
const maxAttempts = 3

// histChan is one channel's share of a batch's history publications.
type histChan struct {
	name  string
	count int32
	// The last publication's options win, as in the memory engine.
	size, ttlMS, metaTTLMS int64
	top                    int64
	epoch                  string
	next                   int64 // offset of the channel's next publication in the batch
}

// txWriter runs publishing transactions. Each writer goroutine has one,
// and reuses its buffers from batch to batch.
type txWriter struct {
	e     *Engine
	hist  map[string]*histChan
	order []*histChan
	rec   []byte
	spill []byte
	idem  idemPlan // the batch's idempotency keys (idempotency.go)
	// idleLimit is the statement that bounds how long the server keeps a
	// transaction of this writer open while waiting for its next command.
	idleLimit string
}

func (e *Engine) runWriter(q *queue) {
	w := &txWriter{e: e, hist: make(map[string]*histChan), idleLimit: idleLimitStatement(e.opts.WriteTimeout)}
	var batch []*item
	for {
		batch = q.take(batch[:0])
		if len(batch) == 0 {
			return
		}
		w.write(batch)
		clear(batch)
	}
}

// write publishes items in one transaction and answers every caller.
func (w *txWriter) write(items []*item) {
	live := items[:0]
	for _, it := range items {
		if it.cancelled() {
			it.res <- itemResult{err: context.Canceled}
			continue
		}
		live = append(live, it)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(w.e.bgCtx, w.e.opts.WriteTimeout)
	defer cancel()
	start := time.Now()
	var err error
	for attempt := 1; ; attempt++ {
		err = w.attempt(ctx, live)
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		w.e.metrics.publishErrors.Inc()
		err = fmt.Errorf("publishing transaction: %w", err)
		for _, it := range live {
			it.res <- itemResult{err: err}
		}
		return
	}
	w.e.metrics.batchSize.Observe(float64(len(live)))
	w.e.metrics.txSeconds.Observe(time.Since(start).Seconds())
	for _, it := range live {
		if sp, ok := w.answer(it); ok {
			it.res <- itemResult{sp: sp}
			continue
		}
		var sp engine.StreamPosition
		if it.kind == kindPub && it.opts.HasHistory() {
			h := w.hist[it.channel]
			sp = engine.StreamPosition{Offset: uint64(h.next), Epoch: h.epoch}
			h.next++
		}
		it.res <- itemResult{sp: sp}
	}
}

// idleLimitStatement makes the server end a publishing transaction that
// waits longer than timeout for its next command. A transaction with
// history holds its streams' row locks between its two round trips; if
// the connection then goes silent (a NAT or load balancer that dropped the
// flow, a partition) without a FIN or an RST, the server would otherwise
// keep the transaction, and the locks, for as long as its TCP keepalive
// takes to notice (two hours by default), and every node's publications
// to those channels would wait on them. Our side gives up after
// timeout, so a transaction idle for longer can never commit anyway.
func idleLimitStatement(timeout time.Duration) string {
	return "SET LOCAL idle_in_transaction_session_timeout = " + strconv.FormatInt(max(ceilMS(timeout), 1), 10)
}

// retryable reports whether a failed batch left nothing behind and may be
// sent again.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40P01", "40001", "23505": // deadlock, serialization failure, spill id collision
			return true
		}
		return false
	}
	return pgconn.SafeToRetry(err)
}

// attempt runs the batch's transaction once. With history it takes two
// round trips: the first allocates offsets (holding the streams' row locks
// from then until commit), the second writes the history rows, spilled
// records and notifications and commits. Without history it is one
// round trip.
func (w *txWriter) attempt(ctx context.Context, items []*item) (err error) {
	w.idem.reset()
	keyed := hasIdempotencyKeys(items)
	conn, err := w.e.pubPool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	inTx := false
	defer func() {
		if err != nil && inTx && !conn.Conn().IsClosed() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			_, _ = conn.Exec(rctx, "ROLLBACK")
			cancel()
		}
	}()
	var b pgx.Batch
	// A batch whose only rows are presence (AddPresenceJoin) commits
	// without waiting for its WAL to reach disk, as presence refreshed
	// within its TTL can afford to: a database crash loses at most rows
	// their nodes add again. The wait is a disk flush, several
	// milliseconds on a busy disk, where the round trip is a fraction of
	// one; the connection's next command waits for it.
	async := w.e.opts.SynchronousCommitOff || presenceOnly(items)
	begin := func() {
		b.Queue("BEGIN")
		b.Queue(w.idleLimit)
		if async {
			b.Queue("SET LOCAL synchronous_commit = off")
		}
		inTx = true
	}
	if keyed {
		// One more round trip, only for batches with idempotency keys.
		begin()
		if err := w.claimKeys(ctx, conn, &b, items); err != nil {
			return err
		}
		b = pgx.Batch{}
	}
	w.planHistory(items)
	if len(w.order) > 0 {
		if !inTx {
			begin()
		}
		if err := w.allocate(ctx, conn, &b); err != nil {
			return err
		}
		b = pgx.Batch{}
	}
	if keyed {
		w.positions(items)
		if len(w.idem.leaders) > 0 {
			w.queueStoreKeys(&b)
		}
	}
	payloads, channels, spillIDs, spillBodies := w.encode(items)
	if !inTx && (len(spillIDs) > 0 || async) {
		begin()
	}
	if len(w.order) > 0 {
		w.queueHistory(&b, items)
	}
	if len(spillIDs) > 0 {
		b.Queue(w.e.sql.insertSpill, spillIDs, spillBodies, w.e.opts.SpillRetention.Milliseconds())
		w.e.metrics.spilled.Add(float64(len(spillIDs)))
	}
	w.queuePresence(&b, items)
	b.Queue(w.e.sql.notify, channels, payloads)
	if inTx {
		b.Queue("COMMIT")
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return err
	}
	inTx = false
	for _, p := range payloads {
		w.e.metrics.payloadBytes.Observe(float64(len(p)))
	}
	return nil
}

// presenceOnly reports whether items write presence rows and nothing
// else that is kept: no history, no idempotency keys.
func presenceOnly(items []*item) bool {
	rows := false
	for _, it := range items {
		switch {
		case it.kind == kindPub && (it.opts.HasHistory() || it.opts.IdempotencyKey != ""):
			return false
		case it.kind == kindJoin && it.presenceTTL > 0:
			rows = true
		}
	}
	return rows
}

// queuePresence stores the presence of the joins that carry it
// (AddPresenceJoin), in the transaction that notifies them: visible
// when the join is delivered, with no round trip of its own.
func (w *txWriter) queuePresence(b *pgx.Batch, items []*item) {
	for _, it := range items {
		if it.kind == kindJoin && it.presenceTTL > 0 {
			b.Queue(w.e.sql.presenceAdd, it.channel, it.info.Client, it.info.User, it.info.ConnInfo, it.info.ChanInfo,
				w.e.opts.NodeID, it.presenceTTL.Microseconds())
		}
	}
}

// planHistory groups the batch's history publications by channel.
func (w *txWriter) planHistory(items []*item) {
	clear(w.hist)
	w.order = w.order[:0]
	for _, it := range items {
		if it.kind != kindPub || !it.opts.HasHistory() || w.idem.skips(it) {
			continue
		}
		h := w.hist[it.channel]
		if h == nil {
			h = &histChan{name: it.channel}
			w.hist[it.channel] = h
			w.order = append(w.order, h)
		}
		h.count++
		h.size = int64(min(it.opts.HistorySize, math.MaxInt32))
		h.ttlMS = ceilMS(it.opts.HistoryTTL)
		h.metaTTLMS = ceilMS(orDefault(it.opts.HistoryMetaTTL, w.e.opts.HistoryMetaTTL))
	}
}

// allocate sends BEGIN and alloc() and sets each channel's offsets.
func (w *txWriter) allocate(ctx context.Context, conn *pgxpool.Conn, b *pgx.Batch) error {
	n := len(w.order)
	names := make([]string, n)
	counts := make([]int32, n)
	sizes := make([]int32, n)
	ttls := make([]int64, n)
	metaTTLs := make([]int64, n)
	for i, h := range w.order {
		names[i], counts[i], sizes[i], ttls[i], metaTTLs[i] = h.name, h.count, int32(h.size), h.ttlMS, h.metaTTLMS
	}
	b.Queue(w.e.sql.alloc, names, counts, sizes, ttls, metaTTLs)
	br := conn.SendBatch(ctx, b)
	for range b.Len() - 1 {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return err
		}
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return err
	}
	got := 0
	for rows.Next() {
		var ch, epoch string
		var top int64
		if err := rows.Scan(&ch, &top, &epoch); err != nil {
			rows.Close()
			_ = br.Close()
			return fmt.Errorf("read allocated offsets: %w", err)
		}
		h := w.hist[ch]
		if h == nil {
			continue
		}
		h.top, h.epoch, h.next = top, epoch, top-int64(h.count)+1
		got++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		_ = br.Close()
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("alloc returned %d of %d channels", got, n)
	}
	return nil
}

// encode builds the batch's notification payloads, in batch order, and
// the records that have to be spilled. It advances each history
// channel's next offset, which write resets before answering callers.
func (w *txWriter) encode(items []*item) (payloads, channels []string, spillIDs []int64, spillBodies [][]byte) {
	var cur []byte
	curChannel := ""
	flush := func() {
		if len(cur) > 0 {
			payloads = append(payloads, string(cur))
			channels = append(channels, curChannel)
			cur = cur[:0]
		}
	}
	for _, it := range items {
		if w.idem.skips(it) {
			continue
		}
		var offset uint64
		var epoch string
		if h := w.hist[it.channel]; h != nil && it.kind == kindPub && it.opts.HasHistory() {
			offset, epoch = uint64(h.next), h.epoch
			h.next++
		}
		w.rec = it.appendRecord(w.rec[:0], offset, epoch, false)
		if len(w.rec)+headerReserve > maxPayload {
			w.spill = it.appendRecord(w.spill[:0], offset, epoch, true)
			id := spillID()
			spillIDs = append(spillIDs, id)
			spillBodies = append(spillBodies, append([]byte(nil), w.spill...))
			w.rec = appendRef(w.rec[:0], it.channel, offset, epoch, id)
		}
		// A targeted control message travels in a payload of its own, on
		// its node's channel.
		if len(cur)+len(w.rec) > maxPayload || it.node != "" {
			flush()
		}
		if len(cur) == 0 {
			cur = appendHeader(cur, w.e.token+"."+strconv.FormatUint(w.e.seq.Add(1), 10))
			curChannel = w.e.sql.notifyChannels[maphash.String(w.e.seed, it.channel)%notifyChannels]
			if it.node != "" {
				curChannel = w.e.sql.nodeChannel(it.node)
			}
		}
		cur = append(cur, w.rec...)
		if it.node != "" {
			flush()
		}
	}
	flush()
	for _, h := range w.order {
		h.next = h.top - int64(h.count) + 1
	}
	return payloads, channels, spillIDs, spillBodies
}

// queueHistory queues the insert of the batch's history rows, whose
// offsets encode has just assigned in the same order.
func (w *txWriter) queueHistory(b *pgx.Batch, items []*item) {
	var (
		names                    []string
		clientIDs, userIDs, tags []*string
		offsets, times           []int64
		data, connInfo, chanInfo [][]byte
	)
	next := make(map[string]int64, len(w.order))
	for _, h := range w.order {
		next[h.name] = h.top - int64(h.count) + 1
	}
	for _, it := range items {
		if it.kind != kindPub || !it.opts.HasHistory() || w.idem.skips(it) {
			continue
		}
		ch := it.channel
		names = append(names, ch)
		offsets = append(offsets, next[ch])
		next[ch]++
		times = append(times, it.pub.Time)
		d := it.pub.Data
		if d == nil {
			d = []byte{}
		}
		data = append(data, d)
		if info := it.pub.Info; info != nil {
			c, u := info.Client, info.User
			clientIDs, userIDs = append(clientIDs, &c), append(userIDs, &u)
			connInfo, chanInfo = append(connInfo, info.ConnInfo), append(chanInfo, info.ChanInfo)
		} else {
			clientIDs, userIDs = append(clientIDs, nil), append(userIDs, nil)
			connInfo, chanInfo = append(connInfo, nil), append(chanInfo, nil)
		}
		tags = append(tags, tagsJSON(it.pub.Tags))
	}
	b.Queue(w.e.sql.insertHistory, names, offsets, times, data, clientIDs, userIDs, connInfo, chanInfo, tags)
}

// appendRecord encodes the item as a notification record.
func (it *item) appendRecord(dst []byte, offset uint64, epoch string, raw bool) []byte {
	switch it.kind {
	case kindPub:
		return appendPub(dst, it.channel, offset, epoch, &it.pub, raw)
	case kindJoin, kindLeave:
		return appendJoinLeave(dst, it.kind, it.channel, it.info, raw)
	default:
		return appendControl(dst, it.data, raw)
	}
}

func tagsJSON(tags map[string]string) *string {
	if len(tags) == 0 {
		return nil
	}
	b, err := json.Marshal(tags)
	if err != nil {
		return nil // a map[string]string always marshals
	}
	s := string(b)
	return &s
}

// spillID picks a random id in the upper half of the positive int64 range;
// ids from SQL's publish() come from the table's sequence, far below.
func spillID() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	return int64(binary.LittleEndian.Uint64(b[:])>>2) | 1<<62
}

func ceilMS(d time.Duration) int64 {
	ms := d.Milliseconds()
	if time.Duration(ms)*time.Millisecond < d {
		ms++
	}
	return ms
}

// orDefault returns v, or def when v is not positive.
func orDefault(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}
