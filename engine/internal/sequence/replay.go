package sequence

import "context"

// replay delivers what each channel of list missed, ReplayChunk channels
// per History read.
func (s *Sequencer[M]) replay(list []*channelState) {
	for len(list) > 0 {
		n := min(len(list), s.cfg.ReplayChunk)
		s.replayChunk(list[:n])
		list = list[n:]
	}
}

func (s *Sequencer[M]) replayChunk(list []*channelState) {
	cursors := make([]Cursor, len(list))
	for i, st := range list {
		cursors[i] = cursorOf(st)
	}
	tails, ok := s.tails(cursors)
	if !ok {
		return
	}
	for i, st := range list {
		if s.apply(st, tails[i]) {
			s.catchUp(st)
		}
	}
}

func cursorOf(st *channelState) Cursor {
	return Cursor{Channel: st.name, After: st.last, Epoch: st.epoch}
}

// tails reads cursors' tails under Retry; it reports false once stopped.
func (s *Sequencer[M]) tails(cursors []Cursor) ([]Tail, bool) {
	var tails []Tail
	ok := s.Retry(func(ctx context.Context) (err error) {
		tails, err = s.cfg.History.Tails(ctx, cursors)
		if err == nil && len(tails) != len(cursors) {
			err = errTailCount{got: len(tails), want: len(cursors)}
		}
		return err
	})
	return tails, ok
}

// catchUp reads and delivers st's stream to its top.
func (s *Sequencer[M]) catchUp(st *channelState) {
	for {
		tails, ok := s.tails([]Cursor{cursorOf(st)})
		if !ok || !s.apply(st, tails[0]) {
			return
		}
	}
}

// apply delivers one read of st's tail and reports whether more must be
// read: the stream restarted and the read did not include the new one, or
// the read was cut short of the top.
func (s *Sequencer[M]) apply(st *channelState, t Tail) bool {
	if t.Epoch == "" {
		return false // no stream: nothing was published since it went away
	}
	restarted := t.Epoch != st.epoch
	if restarted {
		s.restart(st, t.Epoch)
	} else if t.Top < st.last {
		// The stream is behind what was delivered: the database lost
		// publications it had already sent (a failover to a replica that
		// never got them). Its next publications reuse those offsets;
		// dropping them as duplicates would lose them too.
		s.log.Warn("channel stream went back, some delivered publications are gone from history",
			"channel", st.name, "delivered", st.last, "top", t.Top)
		st.last = t.Top
	}
	before := st.last
	s.deliverFrom(st, t.Pubs, t.Top)
	if t.More && st.last < t.Top && (restarted || st.last > before) {
		return true
	}
	s.skipTo(st, t.Top)
	return false
}
