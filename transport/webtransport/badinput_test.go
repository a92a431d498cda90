package webtransport

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/protocol"
)

// TestBadInput: what the client sends wrong closes the connection with
// 3501 (bad request) as a disconnect push, then the stream ends; goleak
// (TestMain) checks that nothing is left behind.
func TestBadInput(t *testing.T) {
	const limit = 1024
	for _, tc := range []struct {
		name  string
		proto protocol.Type
		input []byte
	}{
		{"json garbage", protocol.TypeJSON, []byte("not json at all\n")},
		{"json line over the limit", protocol.TypeJSON, append(bytes.Repeat([]byte("x"), limit+1), '\n')},
		{"json unterminated line over the limit", protocol.TypeJSON, bytes.Repeat([]byte(" "), 3*limit)},
		{"protobuf garbage", protocol.TypeProtobuf, protowire.AppendBytes(nil, []byte{0xff, 0xff, 0xff})},
		{"protobuf length over the limit", protocol.TypeProtobuf, protowire.AppendVarint(nil, limit+1)},
		{"protobuf length overflow", protocol.TypeProtobuf, bytes.Repeat([]byte{0xff}, 11)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{Options: Options{MessageSizeLimit: limit}})
			c := e.dial(tc.proto)
			c.send(tc.input)
			if code := c.awaitDisconnect(); code != uint32(protocol.DisconnectBadRequest) {
				t.Fatalf("disconnect code %d, want %d", code, protocol.DisconnectBadRequest)
			}
			if r := c.next(); r != nil {
				t.Fatalf("after the disconnect push: %+v, want the stream's end", r)
			}
		})
	}
}

// TestBatchedAndSplitCommands: commands that arrive several in one write,
// or one cut across writes, are each handled, as centrifuge-js batches
// them.
func TestBatchedAndSplitCommands(t *testing.T) {
	e := newEnv(t, Config{})
	c := e.dial(protocol.TypeJSON)
	c.send([]byte(`{"id":1,"connect":{}}` + "\n" + `{"id":2,"subscribe":{"channel":"a"}}` + "\n\n" + `{"id":3,"subscr`))
	c.send([]byte(`ibe":{"channel":"b"}}` + "\n"))
	for id := uint32(1); id <= 3; id++ {
		if r := c.await("a reply", func(r *protocol.Reply) bool { return r.Id == id }); r.Error != nil {
			t.Fatalf("reply %d: %+v", id, r.Error)
		}
	}
}

// TestReaderFrames: the reader hands the hub every complete message
// buffered, and keeps an incomplete one for the next read.
func TestReaderFrames(t *testing.T) {
	msg := func(s string) []byte { return protowire.AppendBytes(nil, []byte(s)) }
	stream := append(append(msg("a"), msg("bc")...), msg("def")[:2]...)
	rd := newReader(bytes.NewReader(append(stream, msg("def")[2:]...)), protocol.TypeProtobuf, 64)
	rd.buf = make([]byte, 0, len(stream)) // the first read stops inside "def"
	f, err := rd.next()
	if err != nil || !bytes.Equal(f, append(msg("a"), msg("bc")...)) {
		t.Fatalf("first frame %q %v", f, err)
	}
	if f, err = rd.next(); err != nil || !bytes.Equal(f, msg("def")) {
		t.Fatalf("second frame %q %v", f, err)
	}
	if _, err = rd.next(); err == nil || !gone(err) {
		t.Fatalf("at the end: %v, want the stream's end", err)
	}
}
