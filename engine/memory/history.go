package memory

import (
	"sync"
	"time"

	"github.com/heraldhq/herald/engine"
)

// historyShard holds the streams of the channels that hash to it. Its lock
// is held only for map and stream bookkeeping, never while a handler runs.
type historyShard struct {
	mu      sync.Mutex
	streams map[string]*stream
	expiry  expiryQueue[*stream]
}

// lookup returns ch's stream, made if needed, with due expiry applied and
// its meta kept until metaUntil.
func (h *historyShard) lookup(ch string, now, metaUntil int64) *stream {
	s := h.streams[ch]
	if s == nil {
		s = newStream(ch)
		h.streams[ch] = s
	} else {
		s.refresh(now)
	}
	s.keepMeta(metaUntil)
	return s
}

// append adds p to ch's stream, setting p.Offset, and returns the new top.
func (h *historyShard) append(ch string, p *engine.Publication, opts engine.PublishOptions, now, metaUntil int64) engine.StreamPosition {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.lookup(ch, now, metaUntil)
	s.top++
	p.Offset = s.top
	s.pubs.push(p, opts.HistorySize)
	s.expireAt = after(now, opts.HistoryTTL)
	h.expiry.schedule(&s.timer, s.nextDue(), s)
	return s.position()
}

// read returns the selected publications and the stream's top. Like
// Centrifugo, a read makes the stream's meta if there was none, so that the
// epoch a subscriber sees before the first publication stays the same
// after it.
func (h *historyShard) read(ch string, req engine.HistoryRequest, now, metaUntil int64) ([]*engine.Publication, engine.StreamPosition) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.lookup(ch, now, metaUntil)
	h.expiry.schedule(&s.timer, s.nextDue(), s)
	return s.read(req), s.position()
}

// remove drops ch's publications and keeps its top offset and epoch.
func (h *historyShard) remove(ch string, now int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.streams[ch]
	if s == nil {
		return
	}
	s.refresh(now)
	s.pubs.clear()
}

// drop forgets ch's stream: the next one starts with a new epoch.
func (h *historyShard) drop(ch string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.streams[ch]; s != nil {
		s.cancel()
		delete(h.streams, ch)
	}
}

// sweep handles at most budget due deadlines and returns how many it
// handled.
func (h *historyShard) sweep(now int64, budget int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for n < budget {
		d, ok := h.expiry.popDue(now)
		if !ok {
			break
		}
		n++
		s := d.item
		if !s.fire(d.gen) {
			continue
		}
		if s.metaExpireAt <= now {
			delete(h.streams, s.ch)
			continue
		}
		s.refresh(now)
		h.expiry.schedule(&s.timer, s.nextDue(), s)
	}
	return n
}

// metaTTL picks the meta lifetime for a call: the caller's, or the
// engine's default.
func metaTTL(requested, fallback time.Duration) time.Duration {
	if requested > 0 {
		return requested
	}
	return fallback
}
