package hub

import "github.com/heraldhq/herald/protocol"

// Admission of replies that carry publications (issue 35 #3).
//
// shedReply refuses a history, a recovering subscribe or a map subscribe
// page (subscription_map.go) while the node's write queues are over
// NodeQueueMaxSize, but it runs as the command starts: 200 clients that
// ask for 6 MB each at once all pass it before any reply is queued, and
// each then queues its 6 MB (bench/attacks.sh noread: 1.5 GB). So the
// bytes of such a reply are also taken from the node's budget once it is
// read and before it is encoded: admitReply adds them to queuedTotal only
// if the total stays within half of NodeQueueMaxSize (compare and swap, so
// replies admitted at once cannot together pass it), and refuses the
// command with error 111 otherwise. Half, because past the whole bound
// publications are shed: replies to clients that do not read, filling it,
// made a well-behaved client's publish fail (bench/attacks.sh noread,
// 02:59). The reservation is given back (releaseReply) once the encoded
// reply is queued, where it then counts as queued bytes; for that moment
// the reply counts twice, which errs on the side of refusing. No command
// waits for another's admission, so a client that reads never waits behind
// one that does not.
//
// The publications the engine returned are held until the reply is
// admitted or refused; with the memory engine they are the engine's own
// (protoPublication shares their data), with the others a copy that a
// refusal lets go before it is encoded.

// replyBudgetShare: replies with publications may fill 1/replyBudgetShare
// of NodeQueueMaxSize.
const replyBudgetShare = 2

// publicationOverhead is about what one publication adds to a JSON reply
// beyond its Protobuf size (field names, quoting, framing). 96 keeps the
// estimate at least the earlier field-by-field one (64 per publication, 8
// per tag, 32 per info) for a publication with info and up to 5 tags.
const publicationOverhead = 96

// publicationsSize estimates the encoded bytes of pubs in a reply from
// their Protobuf size, which counts every field (data, key, tags, info,
// ...) as the encoder does; the estimate only decides admission
// (releaseReply gives back exactly what admitReply took).
func publicationsSize(pubs []*protocol.Publication) int {
	n := 0
	for _, p := range pubs {
		n += p.SizeVT() + publicationOverhead
	}
	return n
}

// admitReply reserves n bytes of the node's write queue budget for a reply
// about to be queued, and returns the bytes to give back with
// releaseReply once it is queued. It refuses with error 111, counted in
// herald_node_shed_replies_total, when the queues with the reply would
// hold more than half of NodeQueueMaxSize, unless they hold nothing: one
// reply larger than that is still answered, one at a time.
func (h *Hub) admitReply(n int) (int, *Error) {
	limit := h.client.NodeQueueMaxSize
	if limit < 0 || n <= 0 {
		return 0, nil
	}
	for {
		q := h.queuedTotal.Load()
		if q > 0 && q+int64(n) > int64(limit/replyBudgetShare) {
			h.metrics.shedReplies.Inc()
			return 0, behindError("replies", q, limit)
		}
		if h.queuedTotal.CompareAndSwap(q, q+int64(n)) {
			return n, nil
		}
	}
}

// releaseReply gives back a reservation of admitReply.
func (h *Hub) releaseReply(reserved int) {
	if reserved > 0 {
		h.queuedTotal.Add(-int64(reserved))
	}
}

// queueAdmittedReply queues r, a reply whose bytes admitReply reserved,
// and gives the reservation back: the queue now counts them.
func (c *Client) queueAdmittedReply(r *protocol.Reply, reserved int) {
	c.queueReplySized(r, reserved)
	c.hub.releaseReply(reserved)
}
