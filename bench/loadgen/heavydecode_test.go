package loadgen

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/protocol"
)

// decodeOneJSON encodes r as Herald does and decodes it with the heavy
// client's JSON reader.
func decodeOneJSON(t *testing.T, r *protocol.Reply) *heavyReply {
	t.Helper()
	msg, err := protocol.AppendReply(protocol.TypeJSON, nil, r)
	if err != nil {
		t.Fatal(err)
	}
	var c jsonCursor
	c.reset(msg)
	var out heavyReply
	if err := out.decodeJSON(&c); err != nil {
		t.Fatalf("%s: %v", msg, err)
	}
	return &out
}

func TestHeavyDecodesEveryPushField(t *testing.T) {
	info := &protocol.ClientInfo{User: "u\u00e9\n1", Client: "c1", ConnInfo: []byte(`{"a":[1,2]}`), ChanInfo: []byte(`"x"`)}
	pub := &protocol.Publication{Data: []byte(`{"k":1}`), Info: info, Offset: 7, Tags: map[string]string{"t\"k": "v"},
		Delta: true, Time: 99, Channel: "ch", Key: "key", Removed: true, Score: -3, Epoch: "ep", PrevData: []byte(`[]`), Version: 5}
	r := decodeOneJSON(t, &protocol.Reply{Push: &protocol.Push{Channel: "news:\u00e9", Pub: pub}})
	p := r.push.pub
	if !r.hasPush || r.push.kind != "pub" || string(r.push.channel) != "news:\u00e9" || string(p.data) != `{"k":1}` ||
		!p.hasInfo || string(p.info.user) != "u\u00e9\n1" || string(p.info.client) != "c1" || string(p.info.connInfo) != `{"a":[1,2]}` ||
		string(p.info.chanInfo) != `"x"` || p.offset != 7 || len(p.tags) != 1 || string(p.tags[0].key) != `t"k` || string(p.tags[0].val) != "v" ||
		!p.delta || p.time != 99 || string(p.channel) != "ch" || string(p.key) != "key" || !p.removed || p.score != -3 ||
		string(p.epoch) != "ep" || string(p.prevData) != "[]" || p.version != 5 {
		t.Fatalf("publication decoded as %+v", p)
	}
	r = decodeOneJSON(t, &protocol.Reply{Push: &protocol.Push{Channel: "c", Disconnect: &protocol.Disconnect{Code: 3001, Reason: "shutdown", Reconnect: true}}})
	if r.push.kind != "disconnect" || r.push.code != 3001 || string(r.push.reason) != "shutdown" || !r.push.reconnect {
		t.Fatalf("disconnect decoded as %+v", r.push)
	}
	r = decodeOneJSON(t, &protocol.Reply{Push: &protocol.Push{Channel: "c", Leave: &protocol.Leave{Info: info}}})
	if r.push.kind != "leave" || string(r.push.info.user) != info.User {
		t.Fatalf("leave decoded as %+v", r.push)
	}
	r = decodeOneJSON(t, &protocol.Reply{Id: 3, Error: &protocol.Error{Code: 103, Message: "permission denied", Temporary: true}})
	if r.id != 3 || !r.hasError || r.errCode != 103 || string(r.errMessage) != "permission denied" || !r.errTemporary {
		t.Fatalf("error decoded as %+v", r)
	}
	r = decodeOneJSON(t, &protocol.Reply{Id: 1, Connect: &protocol.ConnectResult{Client: "id", Version: "1", Expires: true, Ttl: 60, Data: []byte(`{}`), Ping: 25, Pong: true, Session: "s", Node: "n", Time: 12}})
	if c := r.connect; !r.hasConnect || string(c.client) != "id" || string(c.version) != "1" || !c.expires || c.ttl != 60 || string(c.data) != "{}" ||
		c.ping != 25 || !c.pong || string(c.session) != "s" || string(c.node) != "n" || c.time != 12 {
		t.Fatalf("connect decoded as %+v", r.connect)
	}
	r = decodeOneJSON(t, &protocol.Reply{Id: 2, Subscribe: &protocol.SubscribeResult{Recoverable: true, Epoch: "e", Offset: 9, Recovered: true,
		Publications: []*protocol.Publication{{Data: []byte(`1`), Offset: 8}, {Data: []byte(`2`), Offset: 9}}}})
	if s := r.subscribe; !r.hasSubscribe || !s.recoverable || string(s.epoch) != "e" || s.offset != 9 || !s.recovered || s.npubs != 2 ||
		string(s.pubs[1].data) != "2" || s.pubs[1].offset != 9 {
		t.Fatalf("subscribe decoded as %+v", r.subscribe)
	}
}

func TestHeavyRejectsMalformedJSON(t *testing.T) {
	for _, in := range []string{
		`{"push":{"channel":"c","pub":{"data":{"k":1}}}`, // cut short
		`{"push":{"channel":"c\q"}}`,                     // bad escape
		"{\"push\":{\"channel\":\"c\xff\"}}",             // invalid UTF-8
		`{"id":1} x`,                                     // trailing bytes
		`{"id":01}`,                                      // leading zero
		`{"push":{"pub":{"data":[1,]}}}`,                 // bad array
		`{"id":"1"}`,                                     // wrong type
	} {
		var c jsonCursor
		c.reset([]byte(in))
		var r heavyReply
		if err := r.decodeJSON(&c); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestHeavyPayloadMatchesParsePayload(t *testing.T) {
	m := Message{Step: 4, N: 100, Seq: 99, Intended: 1234567890123}
	data := AppendPayload(nil, m, 200)
	var h heavyPayload
	got, ok := h.decode(data)
	if !ok || got != m || len(h.pad) == 0 {
		t.Fatalf("decoded %+v %v", got, ok)
	}
	if _, ok := h.decode([]byte(`{"k":1,"n":0,"q":0,"t":1}`)); ok {
		t.Error("payload with n 0 accepted")
	}
	if _, ok := h.decode([]byte(`{"price": 42}`)); ok {
		t.Error("foreign payload accepted")
	}
}

// TestHeavyDecodingDoesNotAllocate: a warm connection decodes a JSON push
// and its data into its reused structs.
func TestHeavyDecodingDoesNotAllocate(t *testing.T) {
	frame := pushFrame(t, protocol.TypeJSON)
	c := &heavyConn{pool: &Pool{cfg: PoolConfig{Format: protocol.TypeJSON}}, pong: true}
	c.pool.batchHandler = tallyHandler{tally: NewTally(1, 1)}
	allocs := testing.AllocsPerRun(100, func() {
		c.batch = c.batch[:0]
		if err := c.decodeFrame(frame, c.handle); err != nil || len(c.batch) != 1 {
			t.Fatal(err, len(c.batch))
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per push", allocs)
	}
}

// TestHeavyReadsFragmentsAndAnswersPings: fragments are joined, a ping
// between them is answered with a pong carrying its payload, and a close
// frame ends the connection with its code.
func TestHeavyReadsFragmentsAndAnswersPings(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	c := &heavyConn{pool: &Pool{cfg: PoolConfig{Format: protocol.TypeJSON, MaxMessage: 1 << 20}}, nc: client, br: newHeavyReader(client)}
	var in bytes.Buffer
	in.Write(serverFrame(t, ws.OpText, false, []byte(`{"push":{"chan`)))
	in.Write(serverFrame(t, ws.OpPing, true, []byte("hi")))
	in.Write(serverFrame(t, ws.OpContinuation, true, []byte(strings.Repeat(" ", 300)+`nel":"c"}}`)))
	in.Write(serverFrame(t, ws.OpClose, true, ws.NewCloseFrameBody(3001, "bye")))
	go func() { _, _ = server.Write(in.Bytes()) }()
	pongs := make(chan ws.Header, 2)
	go func() {
		for {
			h, err := ws.ReadHeader(server)
			if err != nil {
				return
			}
			body := make([]byte, h.Length)
			if _, err := server.Read(body); err != nil && h.Length > 0 {
				return
			}
			pongs <- h
		}
	}()
	msg, err := c.nextMessage()
	if err != nil || !strings.HasSuffix(string(msg), `nel":"c"}}`) || !strings.HasPrefix(string(msg), `{"push":{"chan `) {
		t.Fatalf("message %q, %v", msg, err)
	}
	if h := <-pongs; h.OpCode != ws.OpPong || h.Length != 2 || !h.Masked {
		t.Fatalf("answer to the ping: %+v", h)
	}
	_, err = c.nextMessage()
	if e, ok := err.(errClosedByServer); !ok || e.code != 3001 {
		t.Fatalf("close frame read as %v", err)
	}
}
