package grpcapi_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/grpcapi"
	"github.com/heraldhq/herald/api/grpcapi/apiproto"
)

const publishPath = "/centrifugal.centrifugo.api.CentrifugoApi/Publish"

// h2conn is a raw HTTP/2 client connection: it sends what a misbehaving
// client would (a declared message that never completes), which a gRPC
// client library does not.
type h2conn struct {
	t  *testing.T
	c  net.Conn
	fr *http2.Framer
}

// h2dial connects to addr and sends the client preface and settings.
func h2dial(t *testing.T, addr string) *h2conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	h := &h2conn{t: t, c: c, fr: http2.NewFramer(c, c)}
	if err := h.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return h
}

// open starts a call to path on stream id with the given key ("" for
// none), leaving the stream open for a message.
func (h *h2conn) open(id uint32, path, key string) {
	h.t.Helper()
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	fields := [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":path", path}, {":authority", "localhost"},
		{"content-type", "application/grpc"}, {"te", "trailers"},
	}
	if key != "" {
		fields = append(fields, [2]string{"authorization", "apikey " + key})
	}
	for _, f := range fields {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			h.t.Fatal(err)
		}
	}
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: buf.Bytes(), EndHeaders: true}); err != nil {
		h.t.Fatal(err)
	}
}

// partial sends the start of a message declared as size bytes: its
// length prefix and 32 KiB, in frames of HTTP/2's default size and within
// the initial flow-control window.
func (h *h2conn) partial(id uint32, size int) {
	h.t.Helper()
	msg := make([]byte, 5+32<<10)
	binary.BigEndian.PutUint32(msg[1:5], uint32(size))
	for len(msg) > 0 {
		n := min(len(msg), 16<<10)
		if err := h.fr.WriteData(id, false, msg[:n]); err != nil {
			h.t.Fatal(err)
		}
		msg = msg[n:]
	}
}

// end is how stream id ended: the grpc-status of its trailers, or the
// code of its RST_STREAM. It fails the test when neither comes within
// 5 s.
type end struct {
	grpcStatus string
	rst        http2.ErrCode
	isRST      bool
}

func (h *h2conn) waitEnd(id uint32) end {
	h.t.Helper()
	_ = h.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	dec := hpack.NewDecoder(4096, nil)
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			h.t.Fatalf("stream %d: no end within 5s: %v", id, err)
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			fields, err := dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				h.t.Fatal(err)
			}
			if f.StreamID != id {
				continue
			}
			for _, hf := range fields {
				if hf.Name == "grpc-status" {
					return end{grpcStatus: hf.Value}
				}
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				return end{rst: f.ErrCode, isRST: true}
			}
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = h.fr.WriteSettingsAck()
			}
		case *http2.GoAwayFrame:
			h.t.Fatalf("stream %d: GOAWAY %v", id, f.ErrCode)
		}
	}
}

// TestKeyCheckedBeforeMessage: a call without the key that declares a
// large message and sends half of it is refused with Unauthenticated at
// once, without the server waiting for (and holding) the rest.
func TestKeyCheckedBeforeMessage(t *testing.T) {
	addr := serve(t, startHub(t), grpcapi.Config{Key: testKey, ReadTimeout: time.Minute})
	for name, key := range map[string]string{"none": "", "wrong": "nope"} {
		h := h2dial(t, addr)
		h.open(1, publishPath, key)
		h.partial(1, 512<<10)
		if e := h.waitEnd(1); e.grpcStatus != "16" { // Unauthenticated
			t.Errorf("%s key: stream ended with %+v, want grpc-status 16", name, e)
		}
	}
}

// TestPartialMessageTimesOut: an authenticated call whose message stops
// arriving ends with DeadlineExceeded after ReadTimeout.
func TestPartialMessageTimesOut(t *testing.T) {
	addr := serve(t, startHub(t), grpcapi.Config{Key: testKey, ReadTimeout: 200 * time.Millisecond})
	h := h2dial(t, addr)
	h.open(1, publishPath, testKey)
	h.partial(1, 100<<10)
	if e := h.waitEnd(1); e.grpcStatus != "4" { // DeadlineExceeded
		t.Fatalf("stream ended with %+v, want grpc-status 4", e)
	}
}

// TestStreamsPerConnection: a stream over MaxConcurrentStreams is refused
// (REFUSED_STREAM) while the others wait for their messages.
func TestStreamsPerConnection(t *testing.T) {
	addr := serve(t, startHub(t), grpcapi.Config{Key: testKey, MaxConcurrentStreams: 2, ReadTimeout: time.Minute})
	h := h2dial(t, addr)
	for _, id := range []uint32{1, 3, 5} {
		h.open(id, publishPath, testKey)
	}
	if e := h.waitEnd(5); !e.isRST || e.rst != http2.ErrCodeRefusedStream {
		t.Fatalf("third stream ended with %+v, want RST_STREAM REFUSED_STREAM", e)
	}
}

// TestConnectionsPerAddress: a connection over MaxConnectionsPerAddress
// is closed without being served; once one closes, a new one is served.
func TestConnectionsPerAddress(t *testing.T) {
	addr := serve(t, startHub(t), grpcapi.Config{Key: testKey, MaxConnectionsPerAddress: 2})
	// serverSettings reports whether the server sent its settings (it
	// does first on a connection it serves) or closed c.
	serverSettings := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := http2.NewFramer(io.Discard, c).ReadFrame()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the server neither served nor closed the connection within 5s")
		}
		return err == nil
	}
	// dial connects and sends the client preface; a refused connection
	// may be closed before the preface is written, hence no error check.
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_, _ = io.WriteString(c, http2.ClientPreface)
		return c
	}
	var held []net.Conn
	for i := range 2 {
		c := dial()
		if !serverSettings(c) {
			t.Fatalf("connection %d within the bound was closed", i+1)
		}
		held = append(held, c)
	}
	if serverSettings(dial()) {
		t.Fatal("a third connection from the address was served")
	}
	_ = held[0].Close()
	// The server sees the close asynchronously: a new connection is
	// served once it has; each refused try is closed at once.
	deadline := time.Now().Add(5 * time.Second)
	for !serverSettings(dial()) {
		if time.Now().After(deadline) {
			t.Fatal("no connection served after one of the address's closed")
		}
	}
}

// TestConfigValidate: negative timeouts and stream caps and a
// per-address bound under -1 are refused; -1 is no bound.
func TestConfigValidate(t *testing.T) {
	for _, c := range []grpcapi.Config{{ReadTimeout: -1}, {IdleTimeout: -1}, {MaxConnectionsPerAddress: -2}, {MaxConcurrentStreams: -1}} {
		if c.Validate() == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
	if (grpcapi.Config{MaxConnectionsPerAddress: -1}).Validate() != nil {
		t.Error("-1 (no bound) refused")
	}
}

// TestReadTimeoutEndsWithTheMessage: ReadTimeout bounds the arrival of a
// call's message, not the call: a stream whose first message came in time
// is still served after the timeout has passed.
func TestReadTimeoutEndsWithTheMessage(t *testing.T) {
	const timeout = 300 * time.Millisecond
	addr := serve(t, startHub(t), grpcapi.Config{Key: testKey, Reflection: true, ReadTimeout: timeout})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(keyAuth(testKey)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx5s(t))
	if err != nil {
		t.Fatal(err)
	}
	ask := func() error {
		if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			return err
		}
		_, err := stream.Recv()
		return err
	}
	if err := ask(); err != nil {
		t.Fatal(err)
	}
	// What is asserted is that nothing happens (the stream is not
	// cancelled), which only waiting past the timeout can show.
	<-time.After(2 * timeout)
	if err := ask(); err != nil {
		t.Fatalf("a stream whose message came in time was ended: %v", err)
	}
}

// TestDefaultMaxReceiveMessageSize: left at zero, the limit is the HTTP
// API's body limit, 1 MiB.
func TestDefaultMaxReceiveMessageSize(t *testing.T) {
	c := dial(t, serve(t, startHub(t), grpcapi.Config{Key: testKey}))
	over := []byte(`"` + strings.Repeat("x", api.DefaultMaxBodySize) + `"`)
	if _, err := c.Publish(ctx5s(t), &apiproto.PublishRequest{Channel: "news", Data: over}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a publish over 1 MiB: want ResourceExhausted, got %v", err)
	}
}

// TestSendTimeout: a connection whose client stops taking a large
// response is closed after SendTimeout, freeing what the server queued;
// a client that reads gets the same response with the same timeout.
func TestSendTimeout(t *testing.T) {
	h := startHub(t)
	addr := serve(t, h, grpcapi.Config{Key: testKey, SendTimeout: 500 * time.Millisecond})
	c := dial(t, addr)
	ctx := ctx5s(t)
	data := []byte(`"` + strings.Repeat("x", 60<<10) + `"`)
	for range 10 {
		if res, err := c.Publish(ctx, &apiproto.PublishRequest{Channel: "news", Data: data}); err != nil || res.Error != nil {
			t.Fatalf("publish: %v, %v", res, err)
		}
	}
	req := &apiproto.HistoryRequest{Channel: "news", Limit: 10}
	if res, err := c.History(ctx, req); err != nil || len(res.Result.GetPublications()) != 10 {
		t.Fatalf("a reading client's history: %v", err)
	}

	// The raw client's windows are HTTP/2's initial 64 KiB and it never
	// opens them: the server can write 64 KiB of the 600 KiB response.
	raw := h2dial(t, addr)
	raw.open(1, "/centrifugal.centrifugo.api.CentrifugoApi/History", testKey)
	body, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	msg := make([]byte, 5, 5+len(body))
	binary.BigEndian.PutUint32(msg[1:], uint32(len(body)))
	if err := raw.fr.WriteData(1, true, append(msg, body...)); err != nil {
		t.Fatal(err)
	}
	_ = raw.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		f, err := raw.fr.ReadFrame()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("a client taking no response was not disconnected within 5s")
			}
			return // closed by the server
		}
		if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
			_ = raw.fr.WriteSettingsAck()
		}
	}
}

// TestHeaderListSize: a call whose metadata is over 64 KiB is not served
// (grpc-go's own bound is 16 MiB, held before the key is checked).
func TestHeaderListSize(t *testing.T) {
	c := dial(t, serve(t, startHub(t), grpcapi.Config{Key: testKey}))
	ctx := metadata.AppendToOutgoingContext(ctx5s(t), "x-big", strings.Repeat("x", 100<<10))
	if _, err := c.Info(ctx, &apiproto.InfoRequest{}); err == nil {
		t.Fatal("a call with 100 KiB of metadata was served")
	}
	if _, err := c.Info(ctx5s(t), &apiproto.InfoRequest{}); err != nil {
		t.Fatalf("a call after it: %v", err)
	}
}
