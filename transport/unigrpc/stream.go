package unigrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/unigrpc/unistream"
)

// ErrClosed is returned by WriteFrame once the stream has ended.
var ErrClosed = errors.New("unigrpc: stream closed")

// stream is one Consume call carrying a connection's pushes; it implements
// hub.Transport and hub.WriteStarter. The hub's goroutine converts a frame to Push messages and
// hands them to the Consume goroutine (run), which sends them: a gRPC
// stream may be sent on by one goroutine only, and only until its handler
// returns.
type stream struct {
	timeout time.Duration
	log     *slog.Logger
	remote  string

	// mu serializes deliveries (a WriteFrame and a concurrent Close).
	mu   sync.Mutex
	tmp  []byte
	out  chan []*unistream.Push // to run, unbuffered
	sent chan error             // run's result of each delivery
	// inFlight: StartFrame handed run pushes whose result is still to be
	// taken from sent.
	inFlight bool
	// done is closed when the stream ends: Close, a failed or timed-out
	// delivery, or the client gone (run returned).
	done     chan struct{}
	doneOnce sync.Once
}

func newStream(cfg Config, remote string) *stream {
	return &stream{
		timeout: cfg.WriteTimeout, log: cfg.Logger, remote: remote,
		out: make(chan []*unistream.Push), sent: make(chan error, 1), done: make(chan struct{}),
	}
}

// Protocol is Protobuf: Push messages carry payloads as bytes.
func (s *stream) Protocol() protocol.Type { return protocol.TypeProtobuf }

// WriteFrame sends the replies of frame as bare pushes, within the write
// timeout; a failed or late delivery ends the stream.
func (s *stream) WriteFrame(frame []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs, err := s.convertLocked(frame)
	if err != nil || len(msgs) == 0 {
		return err
	}
	return s.deliverLocked(msgs)
}

// StartFrame hands the pushes of frame to the Consume goroutine when it is
// ready for them, without waiting for them to be sent (hub.WriteStarter),
// so that the hub's shared writers never wait for one client; false, with
// nothing handed over, while it still sends what it was handed before:
// FinishFrame then delivers frame after that, within the write timeout.
func (s *stream) StartFrame(frame []byte) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight {
		select {
		case err := <-s.sent:
			s.inFlight = false
			if err != nil {
				s.finish()
				return false, fmt.Errorf("unigrpc write to %s: %w", s.remote, err)
			}
		default:
			return false, nil
		}
	}
	msgs, err := s.convertLocked(frame)
	if err != nil || len(msgs) == 0 {
		return err == nil, err
	}
	select {
	case <-s.done:
		return false, ErrClosed
	case s.out <- msgs:
		s.inFlight = true
		return true, nil
	default:
		return false, nil
	}
}

// FinishFrame delivers frame after what StartFrame handed over.
func (s *stream) FinishFrame(frame []byte) error { return s.WriteFrame(frame) }

// convertLocked turns the replies of frame into bare pushes.
func (s *stream) convertLocked(frame []byte) ([]*unistream.Push, error) {
	var msgs []*unistream.Push
	err := protocol.SplitFrame(protocol.TypeProtobuf, frame, func(msg []byte) error {
		push, err := protocol.ReplyToPush(protocol.TypeProtobuf, s.tmp[:0], msg)
		if err != nil {
			// A reply with no push form answers a command a
			// unidirectional client never sends: nothing to deliver.
			s.log.Debug("unigrpc: reply not sent on a unidirectional stream", "remote", s.remote, "error", err)
			return nil
		}
		s.tmp = push[:0]
		// unistream.Push has the client protocol's field numbers.
		p := &unistream.Push{}
		if err := proto.Unmarshal(push, p); err != nil {
			return fmt.Errorf("convert push: %w", err)
		}
		msgs = append(msgs, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("unigrpc write to %s: %w", s.remote, err)
	}
	return msgs, nil
}

// Close sends a disconnect push with code and reason and ends the stream.
// Idempotent, and safe concurrently with WriteFrame (it waits for a
// delivery in progress, at most the write timeout).
func (s *stream) Close(code uint32, reason string) {
	s.mu.Lock()
	err := s.deliverLocked([]*unistream.Push{{Disconnect: &unistream.Disconnect{Code: code, Reason: reason}}})
	s.mu.Unlock()
	if err != nil && !errors.Is(err, ErrClosed) {
		s.log.Debug("unigrpc disconnect push not sent", "remote", s.remote, "code", code, "error", err)
	}
	s.finish()
}

// deliverLocked hands msgs to run and waits for them to be sent, after
// what StartFrame handed over before.
func (s *stream) deliverLocked(msgs []*unistream.Push) error {
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	select {
	case <-s.done:
		return ErrClosed
	default:
	}
	if s.inFlight {
		select {
		case err := <-s.sent:
			s.inFlight = false
			if err != nil {
				s.finish()
				return fmt.Errorf("unigrpc write to %s: %w", s.remote, err)
			}
		case <-s.done:
			return ErrClosed
		case <-timer.C:
			s.finish()
			return fmt.Errorf("unigrpc write to %s: not sent within %s", s.remote, s.timeout)
		}
	}
	select {
	case s.out <- msgs:
	case <-s.done:
		return ErrClosed
	case <-timer.C:
		s.finish()
		return fmt.Errorf("unigrpc write to %s: not sent within %s", s.remote, s.timeout)
	}
	select {
	case err := <-s.sent:
		if err != nil {
			s.finish()
			return fmt.Errorf("unigrpc write to %s: %w", s.remote, err)
		}
		return nil
	case <-timer.C:
		// The client does not read: run stays in Send until gRPC gives
		// up on the connection or the client reads again.
		s.finish()
		return fmt.Errorf("unigrpc write to %s: not sent within %s", s.remote, s.timeout)
	}
}

func (s *stream) finish() { s.doneOnce.Do(func() { close(s.done) }) }

// run sends what the hub delivers until the stream ends or the client
// goes away, on the Consume goroutine.
func (s *stream) run(ctx context.Context, st grpc.ServerStreamingServer[unistream.Push]) {
	defer s.finish()
	for {
		select {
		case msgs := <-s.out:
			var err error
			for _, m := range msgs {
				if err = st.Send(m); err != nil {
					break
				}
			}
			s.sent <- err
			if err != nil {
				return
			}
		case <-s.done:
			return
		case <-ctx.Done():
			return
		}
	}
}
