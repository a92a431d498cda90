package httpstream

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/sse"
	"github.com/heraldhq/herald/protocol"
)

// ErrClosed is returned by WriteFrame once the stream has ended.
var ErrClosed = errors.New("httpstream: stream closed")

// framing is how a stream lays messages out in the response body.
type framing int

const (
	// framingStream: a JSON message and "\n"; Protobuf messages
	// varint-delimited, exactly as in a hub frame.
	framingStream framing = iota
	// framingSSE: one event per message, "data: <json>\n\n" (a message
	// holding raw line breaks takes one data line per line: see
	// internal/sse).
	framingSSE
)

// maxKeptBuf is the largest output buffer a stream keeps between writes;
// a larger one, grown by a burst, is dropped so that an idle stream holds
// little memory.
const maxKeptBuf = 16 << 10

// stream is one HTTP response carrying a connection's replies. It
// implements hub.Transport. Writes happen on the hub's goroutine while the
// handler's goroutine waits in serve for the stream to end.
type stream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	proto   protocol.Type
	framing framing
	uni     bool // replies become bare pushes (protocol.ReplyToPush)
	timeout time.Duration
	log     *slog.Logger
	remote  string

	mu    sync.Mutex
	ended bool // no more writes: closed, broken, or the handler returned
	// codes, while set, holds the 200 back until the first write, so that
	// a refused connect can be answered with an HTTP status instead
	// (coderesponse.go).
	codes *CodeToHTTPResponse
	buf   []byte // output buffer, reused between writes
	tmp   []byte // a unidirectional stream's converted push, reused
	// done is closed when the stream ends on our side (Close, a failed
	// write): the handler then returns and net/http ends the response.
	done     chan struct{}
	doneOnce sync.Once
}

func newStream(w http.ResponseWriter, proto protocol.Type, f framing, uni bool, cfg Config, remote string) *stream {
	return &stream{
		w: w, rc: http.NewResponseController(w), proto: proto, framing: f, uni: uni,
		timeout: cfg.WriteTimeout, log: cfg.Logger, remote: remote,
		done: make(chan struct{}),
	}
}

// Protocol is the stream's encoding for its whole life.
func (s *stream) Protocol() protocol.Type { return s.proto }

// WriteFrame writes the messages of frame in the stream's framing and
// flushes them, within the write timeout. A failed write ends the stream.
func (s *stream) WriteFrame(frame []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return ErrClosed
	}
	out, err := s.encode(s.buf[:0], frame)
	if err != nil {
		return fmt.Errorf("httpstream write to %s: %w", s.remote, err)
	}
	err = s.writeLocked(out)
	if cap(out) <= maxKeptBuf {
		s.buf = out[:0]
	} else {
		s.buf = nil
	}
	if err != nil {
		s.ended = true
		s.finish()
		return fmt.Errorf("httpstream write to %s: %w", s.remote, err)
	}
	return nil
}

// Close writes a disconnect push with code and reason and ends the
// response. Idempotent, and safe concurrently with WriteFrame (it waits
// for a write in progress, at most the write timeout).
func (s *stream) Close(code uint32, reason string) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	msg, err := protocol.AppendPush(s.proto, nil, &protocol.Push{Disconnect: &protocol.Disconnect{Code: code, Reason: reason}})
	if err == nil {
		var out []byte
		out, err = s.encode(nil, protocol.AppendMessage(s.proto, nil, msg))
		if err == nil {
			err = s.writeLocked(out)
		}
	}
	s.mu.Unlock()
	if err != nil {
		s.log.Debug("httpstream disconnect push not sent", "remote", s.remote, "code", code, "error", err)
	}
	s.finish()
}

// end stops all writes; the handler calls it before it returns, since the
// ResponseWriter is not usable after that. It waits for a write in
// progress.
func (s *stream) end() {
	s.mu.Lock()
	s.ended = true
	s.buf, s.tmp = nil, nil
	s.mu.Unlock()
	s.finish()
}

func (s *stream) finish() { s.doneOnce.Do(func() { close(s.done) }) }

// writeLocked writes out and flushes it under the write deadline.
func (s *stream) writeLocked(out []byte) error {
	if s.codes != nil {
		s.codes = nil
		s.w.WriteHeader(http.StatusOK)
	}
	if err := s.rc.SetWriteDeadline(time.Now().Add(s.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := s.w.Write(out); err != nil {
		return err
	}
	return s.rc.Flush()
}

// encode appends the messages of a hub frame to dst in the stream's
// framing, as bare pushes on a unidirectional stream.
func (s *stream) encode(dst, frame []byte) ([]byte, error) {
	if !s.uni && s.framing == framingStream {
		if s.proto == protocol.TypeProtobuf {
			return append(dst, frame...), nil
		}
		// The hub joins JSON messages with "\n": one more ends the last.
		dst = append(dst, frame...)
		return append(dst, '\n'), nil
	}
	err := protocol.SplitFrame(s.proto, frame, func(msg []byte) error {
		if s.uni {
			push, err := protocol.ReplyToPush(s.proto, s.tmp[:0], msg)
			if err != nil {
				// A reply with no push form answers a command a
				// unidirectional client never sends: nothing to
				// deliver, and no reason to end the stream.
				s.log.Debug("httpstream: reply not sent on a unidirectional stream", "remote", s.remote, "error", err)
				return nil
			}
			if cap(push) <= maxKeptBuf {
				s.tmp = push[:0]
			}
			msg = push
		}
		dst = s.frameMessage(dst, msg)
		return nil
	})
	return dst, err
}

// frameMessage appends one message in the stream's framing.
func (s *stream) frameMessage(dst, msg []byte) []byte {
	switch {
	case s.framing == framingSSE:
		// Publication data may hold raw CR or LF as JSON whitespace,
		// which would end a data line early: the encoder writes one
		// data line per line of the message.
		return sse.AppendEvent(dst, "", msg)
	case s.proto == protocol.TypeProtobuf:
		return protocol.AppendMessage(protocol.TypeProtobuf, dst, msg)
	}
	dst = append(dst, msg...)
	return append(dst, '\n')
}
