package hub

import (
	"context"
	"time"
)

// Cluster-wide traces: a trace opened on one node (the origin) leases a
// copy of itself on every other node through control messages; the copy
// forwards the events it matches to the origin, one control message each.
// The lease is renewed while the trace is open and lapses when the origin
// stops renewing it (closed, or the node gone), so a copy never outlives
// its reader by more than traceLease. Nothing of this runs while no trace
// is open.

// traceLease is how long a copy lives without a renewal; renewals are
// sent every traceLease/3.
const traceLease = 10 * time.Second

// remoteTraceBuffer bounds the events a copy holds for the origin.
const remoteTraceBuffer = 256

// controlTrace opens or renews (Until > 0) or closes (Until 0) the copy
// of trace ID on every other node.
type controlTrace struct {
	ID     string    `json:"id"`
	Kind   TraceKind `json:"kind,omitempty"`
	Entity string    `json:"entity,omitempty"`
	// Until is when the copy lapses, in Unix milliseconds.
	Until int64 `json:"until,omitempty"`
}

// controlTraceEvent carries an event of a copy to the trace's origin.
type controlTraceEvent struct {
	ID    string     `json:"id"`
	Event TraceEvent `json:"event"`
	// Data is Event.Data, which TraceEvent does not encode.
	Data []byte `json:"data,omitempty"`
}

// leaseTrace renews t's copies on the other nodes until t closes, then
// closes them.
func (h *Hub) leaseTrace(t *Trace) {
	send := func(until int64) {
		ctx, cancel := context.WithTimeout(context.Background(), h.client.CommandTimeout)
		defer cancel()
		m := controlTrace{ID: t.id, Kind: t.kind, Entity: t.entity, Until: until}
		if err := h.sendControl(ctx, controlMessage{Trace: &m}); err != nil {
			h.log.Debug("trace lease", "error", err)
		}
	}
	h.goBackground(func() {
		tick := time.NewTicker(traceLease / 3)
		defer tick.Stop()
		for {
			send(time.Now().Add(traceLease).UnixMilli())
			select {
			case <-t.done:
				send(0)
				return
			case <-h.ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
}

// handleTraceControl opens, renews or closes the copy of another node's
// trace.
func (h *Hub) handleTraceControl(from string, m *controlTrace) {
	if from == h.nodeID {
		return
	}
	if m.Until != 0 && m.Kind != TraceUser && m.Kind != TraceChannel {
		return
	}
	ts := &h.traces
	ts.mu.Lock()
	t := ts.remote[m.ID]
	switch {
	case m.Until == 0:
		ts.mu.Unlock()
		if t != nil {
			t.Close()
		}
		return
	case t != nil:
		t.until.Store(m.Until)
		ts.mu.Unlock()
		return
	}
	t = &Trace{h: h, kind: m.Kind, entity: m.Entity, id: m.ID, origin: from,
		events: make(chan TraceEvent, remoteTraceBuffer), done: make(chan struct{})}
	t.until.Store(m.Until)
	added := ts.addLocked(t)
	ts.mu.Unlock()
	if !added {
		h.log.Warn("trace of another node refused: too many traces open here", "node", from, "type", m.Kind)
		return
	}
	h.goBackground(func() { h.forwardTrace(t) })
}

// forwardTrace sends a copy's events to its origin until it closes or its
// lease lapses.
func (h *Hub) forwardTrace(t *Trace) {
	defer t.Close()
	check := time.NewTicker(traceLease / 3)
	defer check.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-h.ctx.Done():
			return
		case <-check.C:
			if time.Now().UnixMilli() > t.until.Load() {
				return
			}
		case e := <-t.events:
			ctx, cancel := context.WithTimeout(context.Background(), h.client.CommandTimeout)
			err := h.sendControlTo(ctx, controlMessage{TraceEvent: &controlTraceEvent{ID: t.id, Event: e, Data: e.Data}}, t.origin)
			cancel()
			if err != nil {
				h.log.Debug("trace event to its origin", "node", t.origin, "error", err)
			}
		}
	}
}

// takeTraceEvent offers an event another node's copy forwarded to the
// trace it belongs to here.
func (h *Hub) takeTraceEvent(m *controlTraceEvent) {
	ts := &h.traces
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	t := ts.local[m.ID]
	if t == nil {
		return
	}
	e := m.Event
	e.Data = m.Data
	t.offer(e)
}
