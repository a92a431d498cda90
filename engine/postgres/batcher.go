package postgres

import (
	"context"
	"hash/crc32"
	"sync"
	"time"

	"github.com/heraldhq/herald/engine"
)

// item is one message waiting for a publishing transaction.
type item struct {
	kind    byte
	channel string
	pub     engine.Publication // kindPub: a copy of the caller's
	info    *engine.ClientInfo // kindJoin, kindLeave
	// presenceTTL, on a kindJoin item, stores info's presence in the
	// join's transaction (AddPresenceJoin); 0 for none.
	presenceTTL time.Duration
	data        []byte // kindControl
	node        string // kindControl: the one node it is for, or "" for all
	opts        engine.PublishOptions
	// done is the caller's ctx.Done(): an item whose caller gave up before
	// its transaction began is not written.
	done <-chan struct{}
	res  chan itemResult
}

type itemResult struct {
	sp  engine.StreamPosition
	err error
}

// size approximates the bytes an item adds to a transaction.
func (it *item) size() int {
	n := len(it.channel) + len(it.data) + 64
	if it.kind == kindPub {
		n += len(it.pub.Data) + len(it.pub.ExceptClient)
		if it.pub.Info != nil {
			n += len(it.pub.Info.ConnInfo) + len(it.pub.Info.ChanInfo)
		}
	}
	return n
}

func (it *item) cancelled() bool {
	if it.done == nil {
		return false
	}
	select {
	case <-it.done:
		return true
	default:
		return false
	}
}

// batcher holds one queue per writer. A channel always goes to the same
// queue, on every node (the hash is fixed), so a node's concurrent
// transactions never wait for one another's stream row locks, and across
// nodes only the writers of one partition can.
type batcher struct {
	queues []*queue
}

func newBatcher(writers, maxItems, maxBytes int) *batcher {
	b := &batcher{queues: make([]*queue, writers)}
	for i := range b.queues {
		b.queues[i] = &queue{maxItems: maxItems, maxBytes: maxBytes}
		b.queues[i].cond.L = &b.queues[i].mu
	}
	return b
}

func (b *batcher) add(it *item) error {
	return b.queues[partition(it.channel, len(b.queues))].add(it)
}

func (b *batcher) close() {
	for _, q := range b.queues {
		q.close()
	}
}

// partition maps a channel to one of n parts the same way on every node.
func partition(ch string, n int) int {
	return int(crc32.ChecksumIEEE([]byte(ch)) % uint32(n))
}

// queue is one writer's work. The writer takes everything queued (up to
// the batch limits) when it becomes free, so a publication is sent at once
// when the writer is idle and publications accumulate into larger
// transactions while it is committing: batches grow with load without a
// timer.
type queue struct {
	mu       sync.Mutex
	cond     sync.Cond
	items    []*item
	spare    []*item
	closed   bool
	maxItems int
	maxBytes int
}

func (b *queue) add(it *item) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return engine.ErrClosed
	}
	b.items = append(b.items, it)
	b.cond.Signal()
	return nil
}

// take waits for items and moves a batch of them into dst. It returns an
// empty batch only once the queue is closed.
func (b *queue) take(dst []*item) []*item {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.items) == 0 && !b.closed {
		b.cond.Wait()
	}
	n, bytes := 0, 0
	for n < len(b.items) && n < b.maxItems {
		bytes += b.items[n].size()
		n++
		if bytes >= b.maxBytes {
			break
		}
	}
	dst = append(dst, b.items[:n]...)
	if n == len(b.items) {
		clear(b.items)
		b.items, b.spare = b.spare[:0], b.items[:0]
	} else {
		rest := copy(b.items, b.items[n:])
		clear(b.items[rest:])
		b.items = b.items[:rest]
	}
	return dst
}

// close fails every queued item with engine.ErrClosed and wakes the
// writer so that it exits once its transaction in flight is done.
func (b *queue) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, it := range b.items {
		it.res <- itemResult{err: engine.ErrClosed}
	}
	b.items = nil
	b.cond.Broadcast()
}

// submit queues it and waits for its transaction. When ctx ends first the
// outcome is unknown to the caller: the item may still be written.
func (e *Engine) submit(ctx context.Context, it *item) (engine.StreamPosition, error) {
	it.done = ctx.Done()
	it.res = make(chan itemResult, 1)
	if err := e.batcher.add(it); err != nil {
		return engine.StreamPosition{}, err
	}
	select {
	case r := <-it.res:
		return r.sp, r.err
	case <-ctx.Done():
		return engine.StreamPosition{}, ctx.Err()
	}
}
