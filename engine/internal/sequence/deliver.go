package sequence

import (
	"context"
	"strings"

	"github.com/heraldhq/herald/engine"
)

// deliver hands a resolved message to the handler.
func (s *Sequencer[M]) deliver(m Message) {
	if m.Kind == Control {
		s.h.HandleControl(m.Data)
		return
	}
	st := s.chans[m.Channel]
	if st == nil {
		return // unsubscribed
	}
	switch m.Kind {
	case Join:
		s.h.HandleJoin(st.name, m.Info)
	case Leave:
		s.h.HandleLeave(st.name, m.Info)
	case Publication:
		if m.Pub.Offset == 0 {
			s.h.HandlePublication(st.name, m.Pub, engine.StreamPosition{})
			return
		}
		s.deliverPub(st, m)
	}
}

// deliverPub hands a live publication to the handler, first refilling any
// gap before it from history.
func (s *Sequencer[M]) deliverPub(st *channelState, m Message) {
	offset := m.Pub.Offset
	if m.Epoch != st.epoch {
		s.restart(st, strings.Clone(m.Epoch))
	}
	if offset <= st.last {
		return // delivered by a replay, or older than the subscription
	}
	if offset > st.last+1 {
		s.metrics.GapRepaired()
		if !s.fill(st, offset-1) {
			return // stopped: delivering past the gap would break the order
		}
	}
	s.h.HandlePublication(st.name, m.Pub, engine.StreamPosition{Offset: offset, Epoch: st.epoch})
	st.last = offset
}

// restart moves st to a new stream, from its start.
func (s *Sequencer[M]) restart(st *channelState, epoch string) {
	if st.epoch != "" {
		s.log.Info("channel stream restarted with a new epoch", "channel", st.name)
	}
	st.epoch, st.last = epoch, 0
}

// fill delivers st's publications after st.last up to upto from history;
// it reports false when the Sequencer stopped first.
func (s *Sequencer[M]) fill(st *channelState, upto uint64) bool {
	for st.last < upto {
		var pubs []*engine.Publication
		var more bool
		if !s.Retry(func(ctx context.Context) (err error) {
			pubs, more, err = s.cfg.History.Between(ctx, st.name, st.epoch, st.last, upto)
			return err
		}) {
			return false
		}
		before := st.last
		s.deliverFrom(st, pubs, upto)
		if !more || st.last == before {
			break // all read, or the stream went away or restarted meanwhile
		}
	}
	s.skipTo(st, upto)
	return true
}

// deliverFrom delivers pubs (ascending) above st.last and up to upto.
func (s *Sequencer[M]) deliverFrom(st *channelState, pubs []*engine.Publication, upto uint64) {
	n := 0
	for _, p := range pubs {
		if p.Offset <= st.last || p.Offset > upto {
			continue
		}
		s.skipTo(st, p.Offset-1)
		s.h.HandlePublication(st.name, p, engine.StreamPosition{Offset: p.Offset, Epoch: st.epoch})
		st.last = p.Offset
		n++
	}
	if n > 0 {
		s.metrics.Replayed(n)
	}
}

// skipTo moves st.last up to offset, counting what history no longer had.
func (s *Sequencer[M]) skipTo(st *channelState, offset uint64) {
	if offset <= st.last {
		return
	}
	missing := offset - st.last
	s.metrics.Lost(missing)
	s.log.Warn("publications missing from history, subscribers will have to recover",
		"channel", st.name, "after", st.last, "upto", offset, "missing", missing)
	st.last = offset
}
