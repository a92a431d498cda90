package webtransport

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	wt "github.com/quic-go/webtransport-go"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/protocol"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const path = "/connection/webtransport"

// env is a started hub on the memory engine with the endpoint served over
// HTTP/3 on a loopback UDP port.
type env struct {
	t    *testing.T
	hub  *hub.Hub
	addr string
	pool *x509.CertPool
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Client: hub.ClientConfig{Insecure: true},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A certificate made for the test, by a CA made for it.
	ca := testcerts.NewCA(t, "test")
	h3 := &http3.Server{TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{ca.Server("server").Cert}})}
	wt.ConfigureHTTP3Server(h3)
	ws := &wt.Server{H3: h3}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.Handle(path, NewServer(h, ws, cfg))
	h3.Handler = mux
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ws.Serve(conn)
	}()
	t.Cleanup(func() {
		_ = h.Shutdown(context.Background())
		_ = ws.Close()
		_ = conn.Close()
		<-done
	})
	return &env{t: t, hub: h, addr: conn.LocalAddr().String(), pool: ca.Pool}
}

// client is one WebTransport session with its bidirectional stream, as
// centrifuge-js opens them.
type client struct {
	t     *testing.T
	proto protocol.Type
	d     *wt.Dialer
	sess  *wt.Session
	str   *wt.Stream
	buf   []byte
}

func (e *env) dial(proto protocol.Type) *client {
	e.t.Helper()
	url := "https://" + e.addr + path
	if proto == protocol.TypeProtobuf {
		url += "?cf_protocol=protobuf"
	}
	d := &wt.Dialer{
		TLSClientConfig: &tls.Config{RootCAs: e.pool},
		QUICConfig:      &quic.Config{EnableDatagrams: true, EnableStreamResetPartialDelivery: true},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rsp, sess, err := d.Dial(ctx, url, nil)
	if err != nil {
		_ = d.Close()
		e.t.Fatalf("dial %s: %v", url, err)
	}
	if rsp.StatusCode != http.StatusOK {
		e.t.Fatalf("dial %s: %s", url, rsp.Status)
	}
	str, err := sess.OpenStreamSync(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	c := &client{t: e.t, proto: proto, d: d, sess: sess, str: str}
	e.t.Cleanup(func() {
		_ = c.sess.CloseWithError(0, "")
		_ = c.d.Close()
	})
	return c
}

// send writes raw bytes on the stream.
func (c *client) send(b []byte) {
	c.t.Helper()
	if _, err := c.str.Write(b); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// command sends one command in the session's framing.
func (c *client) command(cmd *protocol.Command) {
	c.t.Helper()
	if c.proto == protocol.TypeJSON {
		b, err := json.Marshal(cmd)
		if err != nil {
			c.t.Fatal(err)
		}
		c.send(append(b, '\n'))
		return
	}
	b, err := cmd.MarshalVT()
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(protowire.AppendBytes(nil, b))
}

// next reads the next reply (pushes included) within 5 s; nil when the
// stream ended.
func (c *client) next() *protocol.Reply {
	c.t.Helper()
	_ = c.str.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if r, ok := c.parse(); ok {
			return r
		}
		var chunk [4096]byte
		n, err := c.str.Read(chunk[:])
		c.buf = append(c.buf, chunk[:n]...)
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			c.t.Fatalf("read: %v", err)
		}
	}
}

// parse takes one complete message off the buffer.
func (c *client) parse() (*protocol.Reply, bool) {
	c.t.Helper()
	var msg []byte
	if c.proto == protocol.TypeJSON {
		i := bytes.IndexByte(c.buf, '\n')
		if i < 0 {
			return nil, false
		}
		msg, c.buf = bytes.Clone(c.buf[:i]), c.buf[i+1:]
		if len(msg) == 0 {
			c.t.Fatalf("an empty line on the stream: centrifuge-js would take it for a message")
		}
	} else {
		size, n := protowire.ConsumeVarint(c.buf)
		if n < 0 || uint64(len(c.buf)-n) < size {
			return nil, false
		}
		// A Protobuf frame keeps the prefix, as DecodeReplies reads it.
		msg, c.buf = bytes.Clone(c.buf[:n+int(size)]), c.buf[n+int(size):]
	}
	rs, err := protocol.DecodeReplies(c.proto, msg)
	if err != nil || len(rs) != 1 {
		c.t.Fatalf("reply %q: %v", msg, err)
	}
	return rs[0], true
}

// await reads until a reply matches.
func (c *client) await(what string, match func(*protocol.Reply) bool) *protocol.Reply {
	c.t.Helper()
	for {
		r := c.next()
		if r == nil {
			c.t.Fatalf("stream ended before %s", what)
		}
		if match(r) {
			return r
		}
	}
}

// awaitDisconnect reads until the disconnect push and returns its code.
func (c *client) awaitDisconnect() uint32 {
	c.t.Helper()
	r := c.await("the disconnect push", func(r *protocol.Reply) bool { return r.Push != nil && r.Push.Disconnect != nil })
	return r.Push.Disconnect.Code
}

// TestSubscribeAndReceive: a webtransport-go client connects, subscribes
// and receives a publication, in JSON and in Protobuf.
func TestSubscribeAndReceive(t *testing.T) {
	for _, proto := range []protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf} {
		t.Run(proto.String(), func(t *testing.T) {
			e := newEnv(t, Config{})
			c := e.dial(proto)
			c.command(&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{}})
			if r := c.await("the connect reply", func(r *protocol.Reply) bool { return r.Id == 1 }); r.Connect == nil || r.Error != nil {
				t.Fatalf("connect: %+v", r)
			}
			c.command(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "room"}})
			if r := c.await("the subscribe reply", func(r *protocol.Reply) bool { return r.Id == 2 }); r.Subscribe == nil || r.Error != nil {
				t.Fatalf("subscribe: %+v", r)
			}
			if _, err := e.hub.Publish(context.Background(), "room", []byte(`{"n":1}`), hub.PublishOptions{}); err != nil {
				t.Fatal(err)
			}
			r := c.await("the publication", func(r *protocol.Reply) bool { return r.Push != nil && r.Push.Pub != nil })
			if r.Push.Channel != "room" || string(r.Push.Pub.Data) != `{"n":1}` {
				t.Fatalf("publication: %+v", r.Push)
			}
			// The server closes with a disconnect push, then the
			// session once the client has gone.
			if err := e.hub.DisconnectUser(context.Background(), "", "", nil, 3503, "bye"); err != nil {
				t.Fatal(err)
			}
			if code := c.awaitDisconnect(); code != 3503 {
				t.Fatalf("disconnect code %d, want 3503", code)
			}
			if r := c.next(); r != nil {
				t.Fatalf("after the disconnect push: %+v, want the stream's end", r)
			}
		})
	}
}

// TestDrain: a draining hub closes the session with 3001 (shutdown), as
// a push the client reads before the stream ends.
func TestDrain(t *testing.T) {
	e := newEnv(t, Config{})
	c := e.dial(protocol.TypeJSON)
	c.command(&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{}})
	c.await("the connect reply", func(r *protocol.Reply) bool { return r.Id == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- e.hub.Drain(ctx, 0) }()
	if code := c.awaitDisconnect(); code != uint32(protocol.DisconnectShutdown) {
		t.Fatalf("disconnect code %d, want %d", code, protocol.DisconnectShutdown)
	}
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
}

// TestClientThatStopsReading: a client that stops reading while
// publications keep coming is closed (its queue overflows, or a write
// waits past the write timeout once its flow-control window is full),
// and the session ends; the other client keeps receiving.
func TestClientThatStopsReading(t *testing.T) {
	e := newEnv(t, Config{WriteTimeout: 200 * time.Millisecond})
	connect := func() *client {
		c := e.dial(protocol.TypeJSON)
		c.command(&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{}})
		c.command(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "room"}})
		c.await("the subscribe reply", func(r *protocol.Reply) bool { return r.Id == 2 })
		return c
	}
	stalled, reader := connect(), connect()
	data := []byte(`"` + strings.Repeat("x", 64<<10) + `"`)
	for i := 0; stalled.sess.Context().Err() == nil; i++ {
		if i == 2000 {
			t.Fatal("2000 publications of 64 KiB and the client that does not read is still connected")
		}
		if _, err := e.hub.Publish(context.Background(), "room", data, hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		reader.await("the publication", func(r *protocol.Reply) bool { return r.Push != nil && r.Push.Pub != nil })
	}
}
