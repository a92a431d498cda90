package admin

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/heraldhq/herald/internal/sse"
)

// eventStream is a server-sent events response of the admin API (the
// channel tail and the trace): one event per write, flushed at once, and a
// comment when idle so that proxies keep it open.
type eventStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// writeTimeout bounds each write, keep-alives included (a deadline
	// left from the last event would otherwise expire under the next
	// keep-alive); 0: none.
	writeTimeout time.Duration
	buf          []byte
	reported     int64 // the dropped count last sent
}

// newEventStream makes w a stream that outlives any read deadline the
// server set for request bodies: past it, net/http's watch for the browser
// going away would fail and end the stream. what names it in the log.
func newEventStream(w http.ResponseWriter, writeTimeout time.Duration, log *slog.Logger, what string) *eventStream {
	s := &eventStream{w: w, rc: http.NewResponseController(w), writeTimeout: writeTimeout}
	if err := s.rc.SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		log.Warn(what+": clear the read deadline", "error", err)
	}
	return s
}

// begin writes the event stream's headers and status.
func (s *eventStream) begin() {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

// flush sends what is written; false when the browser is gone.
func (s *eventStream) flush() bool { return s.rc.Flush() == nil }

// write writes b under the write timeout and flushes it; false when the
// browser is gone or does not take it.
func (s *eventStream) write(b []byte) bool {
	if s.writeTimeout > 0 {
		if err := s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return false
		}
	}
	if _, err := s.w.Write(b); err != nil {
		return false
	}
	return s.flush()
}

// send writes one event. Data may hold raw CR or LF (JSON whitespace),
// which would end a data line early: sse.AppendEvent writes one data line
// per line of it.
func (s *eventStream) send(event string, data []byte) bool {
	s.buf = sse.AppendEvent(s.buf[:0], event, data)
	return s.write(s.buf)
}

// keepAlive writes the idle comment.
func (s *eventStream) keepAlive() bool { return s.write([]byte(": keep-alive\n\n")) }

// reportDropped sends a "dropped" event when the count of messages dropped
// for a slow browser has changed since the last one; false when the
// browser is gone.
func (s *eventStream) reportDropped(dropped int64) bool {
	if dropped == s.reported {
		return true
	}
	s.reported = dropped
	return s.send("dropped", []byte(fmt.Sprint(dropped)))
}
