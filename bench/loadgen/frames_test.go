package loadgen

import (
	"bytes"
	"net"
	"testing"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/protocol"
)

// serverFrame encodes an unmasked frame as a server sends it.
func serverFrame(t testing.TB, op ws.OpCode, fin bool, payload []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := ws.WriteHeader(&b, ws.Header{Fin: fin, OpCode: op, Length: int64(len(payload))}); err != nil {
		t.Fatal(err)
	}
	b.Write(payload)
	return b.Bytes()
}

func TestNextFrame(t *testing.T) {
	for _, size := range []int{0, 125, 126, 65535, 65536} {
		payload := bytes.Repeat([]byte{'a'}, size)
		raw := serverFrame(t, ws.OpText, true, payload)
		// Every strict prefix is incomplete, never an error.
		for _, cut := range []int{0, 1, 2, 3, 9, len(raw) - 1} {
			if cut < 0 || cut >= len(raw) {
				continue
			}
			if _, n, err := nextFrame(raw[:cut], 0); n != 0 || err != nil {
				t.Fatalf("size %d cut %d: used %d err %v", size, cut, n, err)
			}
		}
		f, n, err := nextFrame(append(raw, 0x81), 0)
		if err != nil || n != len(raw) || !f.fin || f.op != ws.OpText || len(f.payload) != size {
			t.Fatalf("size %d: used %d of %d, %+v %v", size, n, len(raw), f.op, err)
		}
	}
	if _, _, err := nextFrame(serverFrame(t, ws.OpText, true, make([]byte, 200)), 100); err == nil {
		t.Error("frame over the limit accepted")
	}
	masked := []byte{0x81, 0x80 | 1, 1, 2, 3, 4, 'x'}
	if _, _, err := nextFrame(masked, 0); err == nil {
		t.Error("masked server frame accepted")
	}
}

func TestClientFrameIsMasked(t *testing.T) {
	payload := []byte(`{"id":1,"connect":{}}`)
	raw := appendClientFrame(nil, ws.OpText, payload)
	h, err := ws.ReadHeader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if !h.Fin || !h.Masked || h.OpCode != ws.OpText || h.Length != int64(len(payload)) {
		t.Fatalf("header %+v", h)
	}
	body := raw[len(raw)-len(payload):]
	ws.Cipher(body, h.Mask, 0)
	if !bytes.Equal(body, payload) {
		t.Errorf("unmasked %q", body)
	}
	big := appendClientFrame(nil, ws.OpBinary, make([]byte, 70000))
	if h, err := ws.ReadHeader(bytes.NewReader(big)); err != nil || h.Length != 70000 {
		t.Errorf("large frame header %+v %v", h, err)
	}
}

// recorder is a Handler that keeps what it is given.
type recorder struct {
	pubs    []string
	replies []uint32
}

func (r *recorder) Publication(_, _ int, ch string, data []byte, _ int64) {
	r.pubs = append(r.pubs, ch+" "+string(data))
}
func (r *recorder) Reply(_ int, id uint32, _ *protocol.Error) { r.replies = append(r.replies, id) }

func TestConsumeJSONAndFragments(t *testing.T) {
	rec := &recorder{}
	c := &Conn{pool: &Pool{handler: rec, cfg: PoolConfig{Format: protocol.TypeJSON}}, nc: discardConn{}}
	push := []byte(`{"push":{"channel":"c","pub":{"data":{"x":1}}}}` + "\n" + `{"id":7,"publish":{}}`)
	stream := serverFrame(t, ws.OpText, true, push)
	// The same message split over a first fragment and a continuation.
	stream = append(stream, serverFrame(t, ws.OpText, false, push[:10])...)
	stream = append(stream, serverFrame(t, ws.OpContinuation, true, push[10:])...)
	n, err := c.consume(0, stream)
	if err != nil || n != len(stream) {
		t.Fatalf("used %d of %d: %v", n, len(stream), err)
	}
	if len(rec.pubs) != 2 || rec.pubs[0] != `c {"x":1}` || len(rec.replies) != 2 || rec.replies[0] != 7 {
		t.Fatalf("pubs %q replies %v", rec.pubs, rec.replies)
	}
	// A close frame ends the connection with its code.
	closeFrame := serverFrame(t, ws.OpClose, true, ws.NewCloseFrameBody(3001, "shutdown"))
	if _, err := c.consume(0, closeFrame); err == nil {
		t.Fatal("close frame not reported")
	} else if e, ok := err.(errClosedByServer); !ok || e.code != 3001 {
		t.Fatalf("close error %v", err)
	}
}

func benchConsume(b *testing.B, format protocol.Type) {
	c := &Conn{pool: &Pool{handler: &nopHandler{}, cfg: PoolConfig{Format: format}}}
	payload := AppendPayload(nil, Message{Step: 3, N: 30000, Seq: 12345, Intended: 1764000000123456789}, 128)
	msg, err := protocol.AppendPush(format, nil, &protocol.Push{Channel: "bench", Pub: &protocol.Publication{Data: payload}})
	if err != nil {
		b.Fatal(err)
	}
	if format == protocol.TypeJSON {
		// AppendPush writes the bare push; the frame wraps it in a reply.
		msg = append(append([]byte(`{"push":`), msg...), '}')
	}
	frame := serverFrame(b, ws.OpText, true, protocol.AppendMessage(format, nil, msg))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.consume(0, frame); err != nil {
			b.Fatal(err)
		}
	}
}

// discardConn accepts writes (the close reply) and drops them.
type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }

type nopHandler struct{ n int }

func (h *nopHandler) Publication(int, int, string, []byte, int64) { h.n++ }
func (h *nopHandler) Reply(int, uint32, *protocol.Error)          {}

func BenchmarkConsumeJSON(b *testing.B)     { benchConsume(b, protocol.TypeJSON) }
func BenchmarkConsumeProtobuf(b *testing.B) { benchConsume(b, protocol.TypeProtobuf) }
