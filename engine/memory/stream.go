package memory

import (
	"crypto/rand"
	"encoding/base64"

	"github.com/heraldhq/herald/engine"
)

// stream is one channel's history: its publications, which all expire
// together HistoryTTL after the last publication (as in Centrifugo's memory
// broker), and its meta (top offset and epoch), which lives longer.
type stream struct {
	timer
	ch    string
	epoch string
	top   uint64
	pubs  ring
	// expireAt is when pubs expire; it matters only while pubs is not empty.
	expireAt int64
	// metaExpireAt is when the whole stream, epoch included, is forgotten.
	metaExpireAt int64
}

func newStream(ch string) *stream {
	return &stream{ch: ch, epoch: newEpoch()}
}

// newEpoch names a stream instance. It is random rather than a timestamp so
// that two instances made within one clock tick still differ.
func newEpoch() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// refresh applies expiry that is due but that the janitor has not handled
// yet, so callers never see expired data.
func (s *stream) refresh(now int64) {
	switch {
	case s.metaExpireAt <= now:
		s.pubs.clear()
		s.top = 0
		s.epoch = newEpoch()
	case s.pubs.n > 0 && s.expireAt <= now:
		s.pubs.clear()
	}
}

// keepMeta makes the meta live at least until at; a shorter MetaTTL on a
// later call never cuts short what an earlier call promised.
func (s *stream) keepMeta(at int64) {
	if at > s.metaExpireAt {
		s.metaExpireAt = at
	}
}

// nextDue is when the janitor has something to do with s.
func (s *stream) nextDue() int64 {
	if s.pubs.n > 0 && s.expireAt < s.metaExpireAt {
		return s.expireAt
	}
	return s.metaExpireAt
}

func (s *stream) position() engine.StreamPosition {
	return engine.StreamPosition{Offset: s.top, Epoch: s.epoch}
}

// read selects publications as protocol.md section 3 describes: Since is
// exclusive, forward reads go up from the oldest kept publication, reverse
// reads go down from the newest.
func (s *stream) read(req engine.HistoryRequest) []*engine.Publication {
	if req.Limit == 0 || s.pubs.n == 0 {
		return nil
	}
	first := s.top - uint64(s.pubs.n) + 1 // offsets in pubs are consecutive
	var from, count uint64                // offset to start at, publications available
	if req.Reverse {
		from = s.top
		if req.Since != nil {
			if req.Since.Offset <= first {
				return nil
			}
			from = min(req.Since.Offset-1, s.top)
		}
		count = from - first + 1
	} else {
		from = first
		if req.Since != nil {
			if req.Since.Offset >= s.top {
				return nil
			}
			from = max(req.Since.Offset+1, first)
		}
		count = s.top - from + 1
	}
	if req.Limit > 0 && uint64(req.Limit) < count {
		count = uint64(req.Limit)
	}
	out := make([]*engine.Publication, count)
	idx := int(from - first)
	for i := range out {
		out[i] = s.pubs.at(idx)
		if req.Reverse {
			idx--
		} else {
			idx++
		}
	}
	return out
}
