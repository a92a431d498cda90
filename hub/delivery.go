package hub

import (
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// engineHandler receives what the engine delivers and fans it out to
// local subscribers. Encoding happens once per publication and protocol,
// and every subscriber's queue shares the encoded bytes.
type engineHandler struct{ h *Hub }

func (e engineHandler) HandlePublication(ch string, pub *engine.Publication, sp engine.StreamPosition) {
	h := e.h
	if pub.Time > 0 {
		h.metrics.deliveryLag.Observe(float64(time.Now().UnixMilli()-pub.Time) / 1000)
	}
	d := &delivery{push: &protocol.Push{Channel: ch, Pub: protoPublication(pub)}}
	d.push.Pub.Offset = sp.Offset
	d.delta = h.deltas.advance(ch, pub, sp)
	if d.delta != nil && !pub.Delta && !h.deltaPublish(ch) {
		d.delta.fullOnly()
	}
	n := 0
	except := pub.ExceptClient
	visible := h.rowVerdicts(ch, pub) // nil: no row check
	hand := handoff{h: h}
	h.subs.each(ch, func(c *Client, s *subscription) {
		if except != "" && c.id == except || !passesFilter(s.filter, &d.matches, pub) ||
			visible != nil && !visible[c.User()] {
			c.skipPublication(s, sp)
			return
		}
		c.deliverPublication(s, sp, d, &hand)
		n++
	})
	hand.flush()
	h.metrics.sent["pub"].Add(float64(n))
	if h.traces.active() {
		h.tracePublication(ch, pub, sp.Offset)
	}
}

// joinLeaveAllowed reports whether ch, with its local subscribers, is
// still small enough for join and leave events (counting the suppressed).
func (h *Hub) joinLeaveAllowed(ch string, r *rule) bool {
	if r.joinLeaveAllowed(h.subs.count(ch)) {
		return true
	}
	h.metrics.joinLeaveCapped.Inc()
	return false
}

// joinLeaveTarget reports whether an event from the engine about ch is to
// be pushed here: not to a crowd above its namespace's bound (the node
// that emitted it may have fewer subscribers, or an older configuration).
func (h *Hub) joinLeaveTarget(ch string) bool {
	r, e := h.channels.resolve(ch)
	return e == nil && h.joinLeaveAllowed(ch, r)
}

func (e engineHandler) HandleJoin(ch string, info *engine.ClientInfo) {
	if e.h.joinLeaveTarget(ch) {
		e.h.fanOutJoinLeave(ch, &protocol.Push{Channel: ch, Join: &protocol.Join{Info: protoClientInfo(info)}}, "join")
	}
}

func (e engineHandler) HandleLeave(ch string, info *engine.ClientInfo) {
	if e.h.joinLeaveTarget(ch) {
		e.h.fanOutJoinLeave(ch, &protocol.Push{Channel: ch, Leave: &protocol.Leave{Info: protoClientInfo(info)}}, "leave")
	}
}

// fanOutJoinLeave pushes a join or leave event to the local subscribers
// of ch that asked for them, and counts them under kind.
func (h *Hub) fanOutJoinLeave(ch string, push *protocol.Push, kind string) {
	d := &delivery{push: push}
	n := 0
	h.subs.each(ch, func(c *Client, s *subscription) {
		if c.deliverJoinLeave(s, d) {
			n++
		}
	})
	h.metrics.sent[kind].Add(float64(n))
}

func (e engineHandler) HandleControl(data []byte) { e.h.handleControl(data) }

// deliverPublication queues a publication for one subscriber, or holds it
// back while the subscription is being set up; hand is the fan-out's
// (delivery_handoff.go).
func (c *Client) deliverPublication(s *subscription, sp engine.StreamPosition, d *delivery, hand *handoff) {
	d = d.pushFor(s)
	p := bufferedPub{offset: sp.Offset, epoch: sp.Epoch}
	if s.delta {
		p.msg, p.diff = d.deltaMsgs(c.proto)
		if d.delta != nil {
			p.base, p.ref = d.delta.base, d.delta.ref
		}
		p.keyed = d.push.Pub.Key != ""
	} else {
		p.msg = d.encoded(c.proto)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.active || c.state != stateConnected {
		return
	}
	if s.syncing {
		s.buffered = append(s.buffered, p)
		return
	}
	c.deliverLocked(s, p, hand)
}

// skipPublication moves a positioned subscription past a publication it
// is not to receive (PublishOptions.ExceptClient), so the next one is not
// taken for a gap.
func (c *Client) skipPublication(s *subscription, sp engine.StreamPosition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.active || c.state != stateConnected || !s.positioned || sp.Offset == 0 {
		return
	}
	if s.syncing {
		s.buffered = append(s.buffered, bufferedPub{offset: sp.Offset, epoch: sp.Epoch, skip: true})
		return
	}
	s.skipLocked(sp.Offset, sp.Epoch)
}

// skipLocked moves the subscription's position past offset when it is the
// next one; after a gap it stays, and the next publication reveals the gap.
func (s *subscription) skipLocked(offset uint64, epoch string) {
	if epoch == s.epoch && offset == s.offset+1 {
		s.offset = offset
	}
}

// deliverLocked queues p unless a positioned subscription already has
// it; a gap or a new epoch means the client lost publications, and it is
// asked to subscribe again and recover. The client goes to a writer
// through hand (nil: at once).
func (c *Client) deliverLocked(s *subscription, p bufferedPub, hand *handoff) {
	offset, epoch, msg := p.offset, p.epoch, p.msg
	if s.positioned && offset > 0 {
		if epoch == s.epoch && offset <= s.offset {
			return
		}
		if epoch != s.epoch || offset != s.offset+1 {
			c.logger().Info("publication stream gap: client must recover", "channel", s.channel,
				"have_offset", s.offset, "got_offset", offset, "epoch_changed", epoch != s.epoch)
			go c.unsubscribeIf(s.channel, s, protocol.UnsubscribeInsufficientState)
			return
		}
		s.offset = offset
	}
	if msg == nil {
		s.deltaHave = deltaRef{} // the next one goes in full
		// Data a JSON client cannot decode. Publish refuses it for JSON
		// namespaces and JSON clients cannot subscribe to binary ones, so
		// only data published before that rule (an upgrade) gets here: the
		// client misses this one publication rather than its subscription.
		c.logger().Warn("publication not delivered: its data is not JSON", "channel", s.channel, "offset", offset)
		return
	}
	if s.delta {
		c.enqueueDeltaLocked(s, p, hand)
		return
	}
	c.enqueueQueuedLocked(queued{Msg: msg, Droppable: s.rule.QueuePolicy == QueueDropOldest}, hand)
}

func (c *Client) deliverJoinLeave(s *subscription, d *delivery) bool {
	if !s.pushJoinLeave {
		return false
	}
	msg := d.pushFor(s).encoded(c.proto)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.active && !s.syncing && c.state == stateConnected {
		c.enqueueLocked(msg)
		return true
	}
	return false
}
