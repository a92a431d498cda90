package httpstream

import (
	"context"
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
// implements hub.Transport and hub.WriteStarter: the hub's shared writers
// hand a frame to the handler's goroutine, which waits in serve for the
// stream to end and writes what it is handed meanwhile (run), so that no
// shared writer waits for one client's response to drain. A frame that
// arrives while the previous one is still being written is written by the
// hub on a goroutine of the client's own (FinishFrame), after it.
type stream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	proto   protocol.Type
	framing framing
	uni     bool // replies become bare pushes (protocol.ReplyToPush)
	timeout time.Duration
	log     *slog.Logger
	remote  string

	// wmu is held by whoever writes to the ResponseWriter; mu guards the
	// state below and is never held during a write.
	wmu   sync.Mutex
	mu    sync.Mutex
	idle  sync.Cond // on mu: busy was cleared, or the stream ended
	ended bool      // no more writes: closed, broken, or the handler returned
	// busy: buf holds output handed to the handler's goroutine (StartFrame)
	// that it has not finished writing; buf belongs to that goroutine
	// until busy clears.
	busy bool
	buf  []byte        // output buffer, reused between writes
	tmp  []byte        // a unidirectional stream's converted push, reused
	kick chan struct{} // buffered 1: output waits for run
	// codes, while set, holds the 200 back until the first write, so that
	// a refused connect can be answered with an HTTP status instead
	// (coderesponse.go); guarded by wmu.
	codes *CodeToHTTPResponse
	// done is closed when the stream ends on our side (Close, a failed
	// write): the handler then returns and net/http ends the response.
	done     chan struct{}
	doneOnce sync.Once
}

func newStream(w http.ResponseWriter, proto protocol.Type, f framing, uni bool, cfg Config, remote string) *stream {
	s := &stream{
		w: w, rc: http.NewResponseController(w), proto: proto, framing: f, uni: uni,
		timeout: cfg.WriteTimeout, log: cfg.Logger, remote: remote,
		kick: make(chan struct{}, 1), done: make(chan struct{}),
	}
	s.idle.L = &s.mu
	return s
}

// Protocol is the stream's encoding for its whole life.
func (s *stream) Protocol() protocol.Type { return s.proto }

// StartFrame hands the messages of frame, in the stream's framing, to the
// handler's goroutine to write and flush, and reports true; or, while
// that goroutine still writes the previous frame, false without taking
// frame: FinishFrame then writes it once the previous one is out.
func (s *stream) StartFrame(frame []byte) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false, ErrClosed
	}
	if s.busy {
		return false, nil
	}
	out, err := s.encode(s.buf[:0], frame)
	if err != nil {
		return false, fmt.Errorf("httpstream write to %s: %w", s.remote, err)
	}
	s.buf, s.busy = out, true
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return true, nil
}

// FinishFrame writes frame after the frame StartFrame handed over.
func (s *stream) FinishFrame(frame []byte) error { return s.WriteFrame(frame) }

// run writes the output StartFrame hands over until the stream ends or
// ctx is done; it runs on the handler's goroutine.
func (s *stream) run(ctx context.Context) {
	for {
		select {
		case <-s.kick:
			s.writeHandedOver()
		case <-s.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// writeHandedOver writes and flushes the output StartFrame left in buf.
func (s *stream) writeHandedOver() {
	s.wmu.Lock()
	s.mu.Lock()
	out, write := s.buf, s.busy && !s.ended
	s.mu.Unlock()
	var err error
	if write {
		err = s.writeLocked(out)
	}
	s.wmu.Unlock()
	s.mu.Lock()
	s.busy = false
	s.keepBufLocked(out)
	if err != nil {
		s.ended = true
		s.finish()
		s.log.Debug("httpstream write failed", "remote", s.remote, "error", err)
	}
	s.idle.Broadcast()
	s.mu.Unlock()
}

// keepBufLocked keeps out as the output buffer unless a burst grew it.
func (s *stream) keepBufLocked(out []byte) {
	if cap(out) <= maxKeptBuf {
		s.buf = out[:0]
	} else {
		s.buf = nil
	}
}

// lockWrite waits until no handed-over output is pending and takes wmu
// and then mu, for a write of the caller's, unless the stream has ended
// (false, nothing held). Whoever ends the stream sets ended under mu before
// it takes wmu, so a write under wmu that saw the stream open completes
// before the handler returns.
func (s *stream) lockWrite() bool {
	s.mu.Lock()
	open := s.waitIdleLocked()
	s.mu.Unlock()
	if !open {
		return false
	}
	s.wmu.Lock()
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		s.wmu.Unlock()
		return false
	}
	return true
}

// waitIdleLocked waits, on mu, until no handed-over output is pending,
// and reports whether the stream may still be written.
func (s *stream) waitIdleLocked() bool {
	for s.busy && !s.ended {
		s.idle.Wait()
	}
	return !s.ended
}

// WriteFrame writes the messages of frame in the stream's framing and
// flushes them, within the write timeout, after any output handed over
// before. A failed write ends the stream.
func (s *stream) WriteFrame(frame []byte) error {
	if !s.lockWrite() {
		return ErrClosed
	}
	out, err := s.encode(s.buf[:0], frame)
	if err != nil {
		s.mu.Unlock()
		s.wmu.Unlock()
		return fmt.Errorf("httpstream write to %s: %w", s.remote, err)
	}
	s.buf = nil // out is this write's until it is done
	s.mu.Unlock()
	err = s.writeLocked(out)
	s.wmu.Unlock()
	s.mu.Lock()
	s.keepBufLocked(out)
	if err != nil {
		s.ended = true
		s.finish()
	}
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("httpstream write to %s: %w", s.remote, err)
	}
	return nil
}

// Close writes a disconnect push with code and reason, after any output
// handed over before, and ends the response. Idempotent, and safe
// concurrently with WriteFrame (it waits for a write in progress, at most
// the write timeout).
func (s *stream) Close(code uint32, reason string) {
	if !s.lockWrite() {
		return
	}
	s.ended = true
	s.idle.Broadcast()
	msg, err := protocol.AppendPush(s.proto, nil, &protocol.Push{Disconnect: &protocol.Disconnect{Code: code, Reason: reason}})
	if err == nil {
		var out []byte
		out, err = s.encode(nil, protocol.AppendMessage(s.proto, nil, msg))
		if err == nil {
			s.mu.Unlock()
			err = s.writeLocked(out)
			s.mu.Lock()
		}
	}
	s.mu.Unlock()
	s.wmu.Unlock()
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
	s.idle.Broadcast()
	s.mu.Unlock()
	s.wmu.Lock()
	s.mu.Lock()
	s.buf, s.tmp = nil, nil
	s.mu.Unlock()
	s.wmu.Unlock()
	s.finish()
}

func (s *stream) finish() { s.doneOnce.Do(func() { close(s.done) }) }

// writeLocked writes out and flushes it under the write deadline; wmu is
// held.
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
