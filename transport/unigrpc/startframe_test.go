package unigrpc

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/unigrpc/unistream"
)

// blockedSender is a gRPC stream whose client does not read: Send waits
// until release is closed.
type blockedSender struct {
	grpc.ServerStream
	entered chan struct{}
	release chan struct{}
	sent    chan *unistream.Push
}

func (b *blockedSender) Send(p *unistream.Push) error {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	<-b.release
	b.sent <- p
	return nil
}

// pushFrame is a hub frame of one publication push on channel ch.
func pushFrame(t *testing.T, ch string) []byte {
	t.Helper()
	msg, err := protocol.AppendPush(protocol.TypeProtobuf, nil, &protocol.Push{Channel: ch, Pub: &protocol.Publication{Data: []byte(`1`)}})
	if err != nil {
		t.Fatal(err)
	}
	return protocol.AppendMessage(protocol.TypeProtobuf, nil, msg)
}

// TestStartFrameDoesNotWaitForTheClient: the hub's shared writers start a
// stream's writes (hub.WriteStarter) and never wait for a client that does
// not read: the first frame is handed to the Consume goroutine, the next,
// while that one is still being sent, is refused at once, and FinishFrame
// delivers it after the first. Before, the hub's writer waited for each
// frame to be sent, up to the write timeout.
func TestStartFrameDoesNotWaitForTheClient(t *testing.T) {
	s := newStream(Config{WriteTimeout: time.Hour, Logger: slog.New(slog.DiscardHandler)}, "test")
	b := &blockedSender{entered: make(chan struct{}, 1), release: make(chan struct{}), sent: make(chan *unistream.Push, 4)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan struct{})
	go func() { s.run(ctx, b); close(ran) }()

	start := time.Now()
	var done bool
	for !done { // run may not be waiting for pushes yet
		var err error
		if done, err = s.StartFrame(pushFrame(t, "a")); err != nil {
			t.Fatal(err)
		}
	}
	<-b.entered // the Consume goroutine sends it, and waits
	if done, err := s.StartFrame(pushFrame(t, "b")); done || err != nil {
		t.Fatalf("second frame while the first waits: done %v, err %v; want false, nil", done, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("starting two writes to a client that does not read took %s", d)
	}
	finished := make(chan error, 1)
	go func() { finished <- s.FinishFrame(pushFrame(t, "b")) }()
	close(b.release)
	if err := <-finished; err != nil {
		t.Fatalf("second frame: %v", err)
	}
	if first, second := <-b.sent, <-b.sent; first.GetPub() == nil || second.GetPub() == nil || first.GetChannel() != "a" || second.GetChannel() != "b" {
		t.Fatalf("sent %v then %v, want the pushes of a then b", first, second)
	}
	cancel()
	<-ran
}
