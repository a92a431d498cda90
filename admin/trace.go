package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/heraldhq/herald/hub"
)

// Live tracing (Centrifugo PRO calls it real-time tracing, with
// POST /admin/trace and {"type": "user"|"channel", "entity": ...}; its
// docs, centrifugal.dev/docs/pro/tracing, give that shape and no more):
// one user's or one channel's traffic on every node, streamed as
// server-sent events. The hub offers events to a bounded buffer and never
// waits for it; a browser that cannot keep up loses events (reported as
// "dropped") and one whose writes stall is cut off.

// traceBuffer bounds the events waiting for the browser.
const traceBuffer = 256

// traceMaxDuration ends a trace left open: each open trace costs every
// traced event a match.
const traceMaxDuration = 30 * time.Minute

// traceRequest is the trace's subject, as a JSON body (POST) or query
// parameters (GET, which EventSource sends).
type traceRequest struct {
	Type   string `json:"type"`
	Entity string `json:"entity"`
}

// traceEvent is a hub.TraceEvent on the wire: a publication's data as
// JSON when it is JSON, else base64.
type traceEvent struct {
	hub.TraceEvent
	Data       json.RawMessage `json:"data,omitempty"`
	DataBase64 []byte          `json:"data_b64,omitempty"`
}

func (a *Handler) trace(w http.ResponseWriter, r *http.Request) {
	req := traceRequest{Type: r.URL.Query().Get("type"), Entity: r.URL.Query().Get("entity")}
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, "trace: body: "+err.Error())
			return
		}
	}
	kind := hub.TraceKind(req.Type)
	switch {
	case kind != hub.TraceUser && kind != hub.TraceChannel:
		writeError(w, http.StatusBadRequest, `trace: type must be "user" or "channel"`)
		return
	case req.Entity == "":
		writeError(w, http.StatusBadRequest, "trace: entity (a user ID or a channel) is required")
		return
	}
	tr, err := a.hub.Trace(kind, req.Entity, traceBuffer)
	if errors.Is(err, hub.ErrTooManyTraces) {
		writeError(w, http.StatusTooManyRequests, "trace: "+err.Error())
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	defer tr.Close()
	a.log.Info("admin trace", "type", req.Type, "entity", req.Entity, "remote", r.RemoteAddr)

	st := newEventStream(w, a.cfg.TraceWriteTimeout, a.log, "admin trace")
	st.begin()
	ready, _ := json.Marshal(map[string]any{"type": req.Type, "entity": req.Entity, "node": a.hub.NodeID()})
	if !st.send("ready", ready) {
		return
	}
	keep := time.NewTicker(a.cfg.KeepAlive)
	defer keep.Stop()
	limit := time.NewTimer(traceMaxDuration)
	defer limit.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-limit.C:
			st.send("end", []byte(`{"reason":"the trace reached its longest duration"}`))
			return
		case <-keep.C:
			if !st.keepAlive() {
				return
			}
		case e := <-tr.Events():
			b, err := json.Marshal(wireTraceEvent(e))
			if err != nil {
				a.log.Warn("admin trace: encode event", "error", err)
				continue
			}
			if !st.send("trace", b) || !st.reportDropped(tr.Dropped()) {
				return
			}
		}
	}
}

func wireTraceEvent(e hub.TraceEvent) traceEvent {
	out := traceEvent{TraceEvent: e}
	if len(e.Data) > 0 {
		if json.Valid(e.Data) {
			out.Data = e.Data
		} else {
			out.DataBase64 = e.Data
		}
	}
	return out
}
