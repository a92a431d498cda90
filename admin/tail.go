package admin

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// The live tail: an in-process hub client subscribed to one channel,
// whose pushes are streamed to the browser as server-sent events. It is a
// real client of the hub, so it sees what subscribers see, from every
// node; it connects with hub.ConnInfo.Credentials (the server vouches for
// it), so it needs neither a token key nor client permissions on the
// channel.

// TransportName names the tail's connections in the hub (connections
// lists, metrics).
const TransportName = "admin"

// tailBuffer bounds the messages waiting for the browser; past it they
// are dropped and counted, so a slow browser never slows the hub.
const tailBuffer = 256

// tailTransport is the hub.Transport of a tail client.
type tailTransport struct {
	msgs    chan []byte
	dropped atomic.Int64
	once    sync.Once
	closed  chan struct{}
	mu      sync.Mutex
	code    uint32
	reason  string
}

func newTailTransport() *tailTransport {
	return &tailTransport{msgs: make(chan []byte, tailBuffer), closed: make(chan struct{})}
}

func (t *tailTransport) Protocol() protocol.Type { return protocol.TypeJSON }

// WriteFrame splits a JSON frame (messages joined by newlines) and queues
// its messages, copied since frame is the hub's.
func (t *tailTransport) WriteFrame(frame []byte) error {
	for msg := range bytes.SplitSeq(frame, []byte{'\n'}) {
		if len(bytes.TrimSpace(msg)) == 0 || bytes.Equal(msg, []byte("{}")) {
			continue // pings
		}
		select {
		case t.msgs <- bytes.Clone(msg):
		default:
			t.dropped.Add(1)
		}
	}
	return nil
}

func (t *tailTransport) Close(code uint32, reason string) {
	t.once.Do(func() {
		t.mu.Lock()
		t.code, t.reason = code, reason
		t.mu.Unlock()
		close(t.closed)
	})
}

// tailMessage is the part of a hub message the tail forwards.
type tailMessage struct {
	Connect json.RawMessage `json:"connect"`
	Error   json.RawMessage `json:"error"`
	Push    *struct {
		Channel string          `json:"channel"`
		Pub     json.RawMessage `json:"pub"`
		Join    json.RawMessage `json:"join"`
		Leave   json.RawMessage `json:"leave"`
		Unsub   json.RawMessage `json:"unsubscribe"`
	} `json:"push"`
}

// tail streams channel's publications (and joins and leaves) as
// server-sent events: "ready" once subscribed, then "pub", "join",
// "leave", and "error" or "end" when it stops.
func (a *Handler) tail(w http.ResponseWriter, r *http.Request) {
	ch := r.URL.Query().Get("channel")
	if ch == "" {
		writeError(w, http.StatusBadRequest, "channel is required")
		return
	}
	if err := a.hub.CheckChannel(ch); err != nil {
		writeError(w, http.StatusBadRequest, "channel: "+err.Error())
		return
	}
	st := newEventStream(w, 0, a.log, "admin tail")
	t := newTailTransport()
	client := a.hub.Open(t, hub.ConnInfo{
		RemoteAddr: r.RemoteAddr, Transport: TransportName, Unidirectional: true,
		Credentials: &hub.ConnectReply{Channels: []string{ch}, Info: []byte(`{"admin":true}`)},
	})
	defer client.HandleClose()
	client.Connect(&protocol.ConnectRequest{Name: "herald-admin"})
	a.log.Info("admin tail", "channel", ch, "remote", r.RemoteAddr)

	st.begin()
	if !st.flush() {
		return
	}
	keep := time.NewTicker(a.cfg.KeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-t.closed:
			t.mu.Lock()
			b, _ := json.Marshal(map[string]any{"code": t.code, "reason": t.reason})
			t.mu.Unlock()
			st.send("end", b)
			return
		case <-keep.C:
			if !st.keepAlive() {
				return
			}
		case msg := <-t.msgs:
			if !a.forward(st.send, msg) || !st.reportDropped(t.dropped.Load()) {
				return
			}
		}
	}
}

// forward sends one hub message as an event; false when the browser is
// gone.
func (a *Handler) forward(send func(string, []byte) bool, msg []byte) bool {
	var m tailMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		a.log.Warn("admin tail: undecodable hub message", "error", err)
		return true
	}
	switch {
	case m.Error != nil:
		return send("error", m.Error)
	case m.Connect != nil:
		return send("ready", []byte("{}"))
	case m.Push != nil && m.Push.Pub != nil:
		return send("pub", m.Push.Pub)
	case m.Push != nil && m.Push.Join != nil:
		return send("join", m.Push.Join)
	case m.Push != nil && m.Push.Leave != nil:
		return send("leave", m.Push.Leave)
	case m.Push != nil && m.Push.Unsub != nil:
		return send("error", []byte(`{"message":"unsubscribed by the server"}`))
	}
	return true
}
