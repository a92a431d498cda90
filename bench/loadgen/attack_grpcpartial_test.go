package loadgen

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
)

// readCounter counts the bytes a server's connections read and closes
// reached once they are want or more.
type readCounter struct {
	read    atomic.Int64
	want    int64
	once    sync.Once
	reached chan struct{}
}

type countingListener struct {
	net.Listener
	rc *readCounter
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	return countingConn{Conn: c, rc: l.rc}, err
}

type countingConn struct {
	net.Conn
	rc *readCounter
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.rc.read.Add(int64(n)) >= c.rc.want {
		c.rc.once.Do(func() { close(c.rc.reached) })
	}
	return n, err
}

// TestGRPCPartialHoldsStreams: against a gRPC server that reads a
// message whole before anything else runs (grpc-go without Herald's
// gate), the partial sender gets its declared messages across, far past
// the initial flow-control windows (64 KiB a connection), and holds every
// stream open until the attack ends.
func TestGRPCPartialHoldsStreams(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const conns, streams, size = 2, 3, 200 << 10
	// As many bytes as every message but its last byte (frames and
	// headers make up a little of it).
	rc := &readCounter{want: conns * streams * (5 + size - 1), reached: make(chan struct{})}
	srv := grpc.NewServer()
	apiproto.RegisterCentrifugoApiServer(srv, apiproto.UnimplementedCentrifugoApiServer{})
	go func() { _ = srv.Serve(countingListener{Listener: ln, rc: rc}) }()
	t.Cleanup(srv.Stop)

	cfg := AttackConfig{GRPCAddr: ln.Addr().String(), GRPCConns: conns, GRPCStreams: streams, GRPCMessage: size}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan string, 1)
	go func() {
		out, err := attackGRPCPartial(ctx, cfg, nil)
		if err != nil {
			t.Errorf("attack: %v", err)
		}
		done <- out
	}()
	select {
	case <-rc.reached:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server read %d bytes, want the %d of every message but its last byte", rc.read.Load(), rc.want)
	}
	cancel()
	out := <-done
	for _, w := range []string{"6 streams on 2 connections (0 failed)", "the server ended 0", "6 held to the end"} {
		if !strings.Contains(out, w) {
			t.Errorf("outcome %q lacks %q", out, w)
		}
	}
}
