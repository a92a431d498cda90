package hub

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/heraldhq/herald/engine"
)

// Live tracing: an operator follows one user's or one channel's traffic
// in the cluster as it happens (the admin UI's trace page). The hot paths
// pay one atomic load while no trace is open; with traces open, an event
// is matched against them and offered to each match's bounded buffer,
// never waited on: a trace that is not read fast enough loses events and
// counts them.

// TraceKind is what a trace follows.
type TraceKind string

const (
	// TraceUser follows one user's connections.
	TraceUser TraceKind = "user"
	// TraceChannel follows one channel.
	TraceChannel TraceKind = "channel"
)

// The event types of a trace.
const (
	TraceConnect     = "connect"
	TraceSubscribe   = "subscribe"
	TraceUnsubscribe = "unsubscribe"
	TracePublication = "publication"
	TraceDisconnect  = "disconnect"
)

// MaxTraces bounds the traces open at once on a node, the copies of other
// nodes' traces included: each one is matched against every event while
// it is open.
const MaxTraces = 16

// ErrTooManyTraces is returned by Trace when MaxTraces are open.
var ErrTooManyTraces = errors.New("too many traces open on this node")

// TraceEvent is one event of a trace.
type TraceEvent struct {
	// Time is when it happened, in Unix milliseconds.
	Time int64 `json:"time"`
	// Type is one of TraceConnect, ... TraceDisconnect.
	Type string `json:"type"`
	Node string `json:"node"`
	// User is the connection's user; for a publication in a user trace,
	// the traced user, subscribed to the channel here.
	User string `json:"user,omitempty"`
	// Client is the connection's ID; for a publication, the publisher's
	// when a client published it.
	Client    string `json:"client,omitempty"`
	Transport string `json:"transport,omitempty"`
	Channel   string `json:"channel,omitempty"`
	// Data and Offset: a publication's payload (the hub's, not to be
	// changed) and stream offset.
	Data   []byte `json:"-"`
	Offset uint64 `json:"offset,omitempty"`
	// Code and Reason: an unsubscribe's or a disconnect's.
	Code   uint32 `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Trace is an open trace; read Events until Close.
type Trace struct {
	h       *Hub
	kind    TraceKind
	entity  string
	events  chan TraceEvent
	dropped atomic.Int64
	once    sync.Once
	done    chan struct{} // closed by Close
	// id names the trace in control messages (trace_cluster.go); origin
	// is the node a copy forwards to, empty for a trace opened here; until
	// is when a copy's lease lapses (Unix ms).
	id     string
	origin string
	until  atomic.Int64
}

// Events are the trace's events, in the order this node saw them.
func (t *Trace) Events() <-chan TraceEvent { return t.events }

// Dropped counts the events lost because the buffer was full.
func (t *Trace) Dropped() int64 { return t.dropped.Load() }

// Close ends the trace; Events is not closed (a late event may still be
// offered), so readers stop on their own signal.
func (t *Trace) Close() {
	t.once.Do(func() {
		t.h.traces.remove(t)
		close(t.done)
	})
}

// Trace opens a trace of kind for entity (a user ID or a channel), with
// room for buffer events waiting to be read. It sees this node's events
// and, through control messages, those of the other nodes
// (trace_cluster.go), each event naming its node.
func (h *Hub) Trace(kind TraceKind, entity string, buffer int) (*Trace, error) {
	if kind != TraceUser && kind != TraceChannel {
		return nil, errors.New("trace: type must be user or channel")
	}
	if buffer <= 0 {
		return nil, errors.New("trace: buffer must be positive")
	}
	t := &Trace{h: h, kind: kind, entity: entity, events: make(chan TraceEvent, buffer), done: make(chan struct{})}
	t.id = uuid.NewString()
	if !h.traces.add(t) {
		return nil, ErrTooManyTraces
	}
	h.leaseTrace(t)
	return t, nil
}

// traces is the hub's set of open traces.
type traces struct {
	// open is the number of open traces: the hot paths' only cost while
	// it is 0.
	open atomic.Int32
	mu   sync.RWMutex
	set  map[*Trace]struct{}
	// local are the traces opened here and remote the copies of other
	// nodes' traces, by id, for the control messages that name them.
	local  map[string]*Trace
	remote map[string]*Trace
}

func (ts *traces) add(t *Trace) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.addLocked(t)
}

func (ts *traces) addLocked(t *Trace) bool {
	if len(ts.set) >= MaxTraces {
		return false
	}
	if ts.set == nil {
		ts.set = make(map[*Trace]struct{})
		ts.local = make(map[string]*Trace)
		ts.remote = make(map[string]*Trace)
	}
	ts.set[t] = struct{}{}
	if t.origin == "" {
		ts.local[t.id] = t
	} else {
		ts.remote[t.id] = t
	}
	ts.open.Store(int32(len(ts.set)))
	return true
}

func (ts *traces) remove(t *Trace) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.set, t)
	if t.origin == "" {
		delete(ts.local, t.id)
	} else {
		delete(ts.remote, t.id)
	}
	ts.open.Store(int32(len(ts.set)))
}

// active reports whether any trace is open.
func (ts *traces) active() bool { return ts.open.Load() > 0 }

// emitTrace offers e to the traces that match it.
func (h *Hub) emitTrace(e TraceEvent, match func(*Trace) bool) {
	e.Time = time.Now().UnixMilli()
	e.Node = h.nodeID
	h.traces.mu.RLock()
	defer h.traces.mu.RUnlock()
	for t := range h.traces.set {
		if !match(t) {
			continue
		}
		ev := e
		if t.kind == TraceUser && ev.User == "" {
			ev.User = t.entity // a publication, delivered to the user
		}
		t.offer(ev)
	}
}

// offer queues e unless the buffer is full, which loses and counts it.
func (t *Trace) offer(e TraceEvent) {
	select {
	case t.events <- e:
	default:
		t.dropped.Add(1)
	}
}

// traceClient emits a connect, subscribe, unsubscribe or disconnect event
// of c: a user trace matches c's user, a channel trace the channel.
func (h *Hub) traceClient(c *Client, typ, channel string, code uint32, reason string) {
	e := TraceEvent{
		Type: typ, User: c.User(), Client: c.id, Transport: c.conn.Transport,
		Channel: channel, Code: code, Reason: reason,
	}
	h.emitTrace(e, func(t *Trace) bool {
		if t.kind == TraceChannel {
			return channel != "" && channel == t.entity
		}
		return e.User == t.entity
	})
}

// tracePublication emits a publication of ch, which reached this node: a
// channel trace matches ch, a user trace a user with a connection here
// subscribed to ch. Runs only while a trace is open, after the fan-out.
func (h *Hub) tracePublication(ch string, pub *engine.Publication, offset uint64) {
	e := TraceEvent{Type: TracePublication, Channel: ch, Data: pub.Data, Offset: offset}
	if pub.Info != nil {
		e.Client = pub.Info.Client // the publisher, when a client published
	}
	h.emitTrace(e, func(t *Trace) bool {
		if t.kind == TraceChannel {
			return ch == t.entity
		}
		return h.userSubscribed(t.entity, ch)
	})
}

// userSubscribed reports whether a connection of user on this node is
// subscribed to ch.
func (h *Hub) userSubscribed(user, ch string) bool {
	for _, c := range h.users.clients(user) {
		c.mu.Lock()
		s := c.subs[ch]
		ok := s != nil && s.active
		c.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}
