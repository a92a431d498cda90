package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustReplyJSON(t *testing.T, r *Reply) string {
	t.Helper()
	b, err := AppendReply(TypeJSON, nil, r)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("invalid JSON: %s", b)
	}
	return string(b)
}

func TestReplyJSONRules(t *testing.T) {
	tests := []struct {
		name  string
		reply *Reply
		want  string
	}{
		{"ping is an empty reply", &Reply{}, `{}`},
		{"empty result is present", &Reply{Id: 1, Subscribe: &SubscribeResult{}}, `{"id":1,"subscribe":{}}`},
		{
			"always-written fields",
			&Reply{
				Push:          &Push{Join: &Join{Info: &ClientInfo{}}},
				Presence:      &PresenceResult{},
				PresenceStats: &PresenceStatsResult{},
				History:       &HistoryResult{},
			},
			`{"push":{"join":{"info":{"user":"","client":""}}},"presence":{"presence":{}},"presence_stats":{"num_clients":0,"num_users":0},"history":{"publications":[],"epoch":"","offset":0}}`,
		},
		{
			"every empty result in field order",
			&Reply{
				Error: &Error{}, Push: &Push{}, Connect: &ConnectResult{}, Subscribe: &SubscribeResult{},
				Unsubscribe: &UnsubscribeResult{}, Publish: &PublishResult{}, Ping: &PingResult{},
				Rpc: &RPCResult{}, Refresh: &RefreshResult{}, SubRefresh: &SubRefreshResult{},
			},
			`{"error":{},"push":{},"connect":{},"subscribe":{},"unsubscribe":{},"publish":{},"ping":{},"rpc":{},"refresh":{},"sub_refresh":{}}`,
		},
		{
			"empty and nil bytes are omitted",
			&Reply{Id: 2, Rpc: &RPCResult{Data: []byte{}}, Push: &Push{Channel: "c", Message: &Message{}}},
			`{"id":2,"push":{"channel":"c","message":{}},"rpc":{}}`,
		},
		{
			"64-bit integers are numbers",
			&Reply{Push: &Push{Id: -1 << 62, Pub: &Publication{Offset: 1<<64 - 1, Time: 1732278000123, Score: -5}}},
			`{"push":{"id":-4611686018427387904,"pub":{"offset":18446744073709551615,"time":1732278000123,"score":-5}}}`,
		},
		{
			"temporary error",
			&Reply{Id: 7, Error: NewError(ErrorInternal)},
			`{"id":7,"error":{"code":100,"message":"internal server error","temporary":true}}`,
		},
		{
			"history with publications",
			&Reply{Id: 5, History: &HistoryResult{
				Publications: []*Publication{{Data: []byte(`1`), Offset: 1}, {Data: []byte(`"x"`), Offset: 2, Tags: map[string]string{"k": "v"}}},
				Epoch:        "e", Offset: 2,
			}},
			`{"id":5,"history":{"publications":[{"data":1,"offset":1},{"data":"x","offset":2,"tags":{"k":"v"}}],"epoch":"e","offset":2}}`,
		},
		{
			"presence map",
			&Reply{Id: 4, Presence: &PresenceResult{Presence: map[string]*ClientInfo{
				"c1": {User: "u", Client: "c1", ConnInfo: []byte(`{"name":"Ann"}`)},
			}}},
			`{"id":4,"presence":{"presence":{"c1":{"user":"u","client":"c1","conn_info":{"name":"Ann"}}}}}`,
		},
		{
			"connect result with subs and session",
			&Reply{Id: 1, Connect: &ConnectResult{
				Client: "c", Version: "v", Data: []byte(`{}`), Ping: 25, Pong: true, Session: "s", Node: "n", Time: 9,
				Subs: map[string]*SubscribeResult{"news": {Recoverable: true, Epoch: "e", Offset: 4, Positioned: true}},
			}},
			`{"id":1,"connect":{"client":"c","version":"v","data":{},"subs":{"news":{"recoverable":true,"epoch":"e","offset":4,"positioned":true}},"ping":25,"pong":true,"session":"s","node":"n","time":9}}`,
		},
		{
			"recovered publications",
			&Reply{Id: 9, Subscribe: &SubscribeResult{
				Recoverable: true, Epoch: "e", Publications: []*Publication{{Data: []byte(`{}`), Offset: 3}},
				Recovered: true, Offset: 2, Positioned: true, WasRecovering: true,
			}},
			`{"id":9,"subscribe":{"recoverable":true,"epoch":"e","publications":[{"data":{},"offset":3}],"recovered":true,"offset":2,"positioned":true,"was_recovering":true}}`,
		},
		{
			"unsubscribe and disconnect pushes",
			&Reply{Push: &Push{Channel: "c", Unsubscribe: UnsubscribeInsufficientState.Push()}},
			`{"push":{"channel":"c","unsubscribe":{"code":2500,"reason":"insufficient state"}}}`,
		},
		{
			"disconnect push",
			&Reply{Push: &Push{Disconnect: DisconnectShutdown.Push()}},
			`{"push":{"disconnect":{"code":3001,"reason":"shutdown"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustReplyJSON(t, tt.reply); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestRawNewlinesRemoved(t *testing.T) {
	data := []byte("{\n  \"a\": \"x\\ny\",\n  \"b\": [1,\n2]\n}\n")
	got := mustReplyJSON(t, &Reply{Push: &Push{Channel: "c", Pub: &Publication{Data: data}}})
	want := `{"push":{"channel":"c","pub":{"data":{  "a": "x\ny",  "b": [1,2]}}}}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	frame := AppendMessage(TypeJSON, []byte(got), []byte(got))
	if n := bytes.Count(frame, []byte{'\n'}); n != 1 {
		t.Errorf("frame of two messages has %d newlines", n)
	}
}

func TestStringEscaping(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`q"b\s/`, `"q\"b\\s/"`},
		{"\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"<a&b>", `"<a&b>"`},
		{"é😀", `"é😀"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"a\xffb", `"a\ufffdb"`},
		{"\xe2\x82", `"\ufffd\ufffd"`},
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`}, // a UTF-16 surrogate is not UTF-8
	}
	for _, tt := range tests {
		if got := string(appendString(nil, tt.in)); got != tt.want {
			t.Errorf("appendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// FuzzAppendString checks the escaper against encoding/json: the output is
// valid JSON and decodes to the input with each invalid byte replaced.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00\u2028", "\xff\xfe", "é😀\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString([]byte("x"), s)[1:]
		if !json.Valid(b) {
			t.Fatalf("invalid JSON for %q: %s", s, b)
		}
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		// Ranging over a string yields U+FFFD for each invalid byte.
		var want strings.Builder
		for _, r := range s {
			want.WriteRune(r)
		}
		if got != want.String() {
			t.Fatalf("round trip of %q = %q, want %q", s, got, want.String())
		}
		if !utf8.Valid(b) {
			t.Fatalf("output is not UTF-8: %q", b)
		}
	})
}

func TestAppendMessage(t *testing.T) {
	t.Run("json", func(t *testing.T) {
		frame := AppendMessage(TypeJSON, nil, []byte(`{"id":1}`))
		if string(frame) != `{"id":1}` {
			t.Fatalf("first message: %q", frame)
		}
		frame = AppendMessage(TypeJSON, frame, []byte(`{}`))
		if string(frame) != "{\"id\":1}\n{}" {
			t.Fatalf("second message: %q", frame)
		}
	})
	t.Run("protobuf", func(t *testing.T) {
		ping, err := AppendReply(TypeProtobuf, nil, &Reply{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ping) != 0 {
			t.Fatalf("empty reply encodes to %x", ping)
		}
		frame := AppendMessage(TypeProtobuf, nil, ping)
		if !bytes.Equal(frame, []byte{0}) {
			t.Fatalf("ping frame = %x, want 00", frame)
		}
		big := bytes.Repeat([]byte{0xaa}, 300)
		frame = AppendMessage(TypeProtobuf, frame, big)
		if !bytes.Equal(frame[:3], []byte{0x00, 0xac, 0x02}) || len(frame) != 303 {
			t.Fatalf("300-byte message prefix = %x, len %d", frame[:3], len(frame))
		}
	})
}

func TestProtobufReplyBytes(t *testing.T) {
	// {id:1, subscribe:{}}: field 1 varint 1, field 6 empty message.
	b, err := AppendReply(TypeProtobuf, nil, &Reply{Id: 1, Subscribe: &SubscribeResult{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0x08, 0x01, 0x32, 0x00}; !bytes.Equal(b, want) {
		t.Errorf("got %x, want %x", b, want)
	}
	// AppendPush appends to what dst holds.
	b, err = AppendPush(TypeProtobuf, []byte{0xff}, &Push{Channel: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0xff, 0x22, 0x03, 0x12, 0x01, 'c'}; !bytes.Equal(b, want) {
		t.Errorf("got %x, want %x", b, want)
	}
}

func TestEncodeErrors(t *testing.T) {
	if _, err := AppendReply(TypeJSON, nil, nil); err == nil {
		t.Error("nil reply: no error")
	}
	if _, err := AppendPush(TypeProtobuf, nil, nil); err == nil {
		t.Error("nil push: no error")
	}
	if _, err := AppendCommand(TypeJSON, nil, nil); err == nil {
		t.Error("nil command: no error")
	}
	for _, call := range []func() ([]byte, error){
		func() ([]byte, error) { return AppendReply(Type(9), nil, &Reply{}) },
		func() ([]byte, error) { return AppendPush(Type(9), nil, &Push{}) },
		func() ([]byte, error) { return AppendCommand(Type(9), nil, &Command{}) },
	} {
		if _, err := call(); err == nil || !strings.Contains(err.Error(), "Type(9)") {
			t.Errorf("unknown type: err = %v", err)
		}
	}
}

func TestValidJSONPayload(t *testing.T) {
	for in, want := range map[string]bool{
		`{"a":1}`: true, `"s"`: true, `1`: true, ` [1] `: true, `null`: true,
		``: false, `{`: false, "\xff": false, `{"a":1}x`: false, `'s'`: false, "\"\xff\"": false,
	} {
		if got := ValidJSONPayload([]byte(in)); got != want {
			t.Errorf("ValidJSONPayload(%q) = %v", in, got)
		}
	}
}

func TestAppendPushNoAllocs(t *testing.T) {
	push := benchPush()
	for _, typ := range []Type{TypeJSON, TypeProtobuf} {
		dst := make([]byte, 0, 1024)
		allocs := testing.AllocsPerRun(100, func() {
			var err error
			if dst, err = AppendPush(typ, dst[:0], push); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v: AppendPush allocates %v times", typ, allocs)
		}
	}
	reply := &Reply{Id: 2, Subscribe: &SubscribeResult{Recoverable: true, Epoch: "MjmHRReq", Offset: 2, Positioned: true}}
	dst := make([]byte, 0, 1024)
	if allocs := testing.AllocsPerRun(100, func() { dst, _ = AppendReply(TypeJSON, dst[:0], reply) }); allocs != 0 {
		t.Errorf("AppendReply JSON allocates %v times", allocs)
	}
}

func TestTypeString(t *testing.T) {
	for typ, want := range map[Type]string{TypeJSON: "json", TypeProtobuf: "protobuf", 7: "Type(7)"} {
		if got := typ.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", typ, got, want)
		}
	}
	var zero Type
	if zero != TypeJSON {
		t.Error("zero Type is not JSON")
	}
}
