package protocol

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

func TestDecodeCommandsJSON(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  []*Command
	}{
		{"empty frame", "", nil},
		{"whitespace only", " \n\t\r\n ", nil},
		{"pong", `{}`, []*Command{{}}},
		{"pong with spaces", " { } \n", []*Command{{}}},
		{
			"batch with blank lines and CRLF",
			"{\"id\":1,\"ping\":{}}\r\n\n  \n{\"id\":2,\"presence\":{\"channel\":\"a\"}}\n",
			[]*Command{{Id: 1, Ping: &PingRequest{}}, {Id: 2, Presence: &PresenceRequest{Channel: "a"}}},
		},
		{
			"payload kept verbatim",
			`{"id":3,"publish":{"channel":"c","data":  { "b" : [1, 2.50, "\u00e9"] } }}`,
			[]*Command{{Id: 3, Publish: &PublishRequest{Channel: "c", Data: []byte(`{ "b" : [1, 2.50, "\u00e9"] }`)}}},
		},
		{
			"scalar payloads",
			"{\"send\":{\"data\":\"text\"}}\n{\"id\":4,\"rpc\":{\"data\":17,\"method\":\"m\"}}",
			[]*Command{{Send: &SendRequest{Data: []byte(`"text"`)}}, {Id: 4, Rpc: &RPCRequest{Data: []byte(`17`), Method: "m"}}},
		},
		{
			"null leaves fields unset",
			`{"id":5,"publish":{"channel":"c","data":null},"subscribe":null}`,
			[]*Command{{Id: 5, Publish: &PublishRequest{Channel: "c"}}},
		},
		{
			"connect with subs, headers and data",
			`{"id":1,"connect":{"token":"t","data":{"x":1},"subs":{"news":{"recover":true,"offset":18446744073709551615,"epoch":"e","data":[1]}},"headers":{"h":"v"},"flag":9007199254740993}}`,
			[]*Command{{Id: 1, Connect: &ConnectRequest{
				Token: "t", Data: []byte(`{"x":1}`), Headers: map[string]string{"h": "v"}, Flag: 9007199254740993,
				Subs: map[string]*SubscribeRequest{"news": {Recover: true, Offset: 1<<64 - 1, Epoch: "e", Data: []byte(`[1]`)}},
			}}},
		},
		{
			"history since",
			`{"id":6,"history":{"channel":"c","limit":-1,"since":{"offset":7,"epoch":"e"},"reverse":true}}`,
			[]*Command{{Id: 6, History: &HistoryRequest{Channel: "c", Limit: -1, Since: &StreamPosition{Offset: 7, Epoch: "e"}, Reverse: true}}},
		},
		{
			"tags filter",
			`{"id":7,"subscribe":{"channel":"c","tf":{"op":"and","nodes":[{"key":"k","cmp":"in","vals":["a","b"]}]}}}`,
			[]*Command{{Id: 7, Subscribe: &SubscribeRequest{Channel: "c", Tf: &FilterNode{
				Op: "and", Nodes: []*FilterNode{{Key: "k", Cmp: "in", Vals: []string{"a", "b"}}},
			}}}},
		},
		{
			"refresh and sub_refresh",
			"{\"id\":8,\"refresh\":{\"token\":\"t\"}}\n{\"id\":9,\"sub_refresh\":{\"channel\":\"c\",\"token\":\"s\"}}",
			[]*Command{{Id: 8, Refresh: &RefreshRequest{Token: "t"}}, {Id: 9, SubRefresh: &SubRefreshRequest{Channel: "c", Token: "s"}}},
		},
		{
			"unknown fields are skipped",
			`{"id":8,"foo":{},"presence_stats":{"channel":"c","bar":[1]}}`,
			[]*Command{{Id: 8, PresenceStats: &PresenceStatsRequest{Channel: "c"}}},
		},
		{"unknown command", `{"id":8,"foo":{}}`, []*Command{{Id: 8}}},
		{"escaped strings", `{"id":1,"subscribe":{"channel":"a\u0062\n\"c\"\ud83d\ude00"}}`, []*Command{{Id: 1, Subscribe: &SubscribeRequest{Channel: "ab\n\"c\"😀"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeCommands(TypeJSON, []byte(tt.frame))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d commands %v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if !proto.Equal(got[i], tt.want[i]) {
					t.Errorf("command %d:\n got %v\nwant %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestCommandEmpty(t *testing.T) {
	cmds, err := DecodeCommands(TypeJSON, []byte("{}\n{\"id\":8,\"foo\":{}}\n{\"id\":1,\"ping\":{}}"))
	if err != nil {
		t.Fatal(err)
	}
	if !cmds[0].Empty() || cmds[0].Id != 0 {
		t.Error("{} is not an empty command with id 0")
	}
	if !cmds[1].Empty() || cmds[1].Id != 8 {
		t.Error("unknown command is not empty with its id")
	}
	if cmds[2].Empty() {
		t.Error("ping command reported empty")
	}
}

func TestDecodedDataDoesNotAliasFrame(t *testing.T) {
	for _, typ := range []Type{TypeJSON, TypeProtobuf} {
		msg, err := AppendCommand(typ, nil, &Command{Id: 1, Publish: &PublishRequest{Channel: "c", Data: []byte(`{"a":1}`)}})
		if err != nil {
			t.Fatal(err)
		}
		frame := AppendMessage(typ, nil, msg)
		cmds, err := DecodeCommands(typ, frame)
		if err != nil {
			t.Fatal(err)
		}
		for i := range frame {
			frame[i] = 'x'
		}
		if got := string(cmds[0].Publish.Data); got != `{"a":1}` || cmds[0].Publish.Channel != "c" {
			t.Errorf("%v: decoded command changed with the frame: %q %q", typ, cmds[0].Publish.Channel, got)
		}
	}
}

func TestDecodeCommandsJSONMalformed(t *testing.T) {
	tests := []struct {
		name, frame, errHas string
	}{
		{"truncated", `{"id":1,"publish":{"channel":"c"`, "command 0"},
		{"truncated payload", `{"id":1,"publish":{"channel":"c","data":{"a":}}}`, "invalid character"},
		{"second line bad", "{\"id\":1}\n{\"id\":", "command 1"},
		{"array", `[{"id":1}]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"string", `"connect"`, "not a JSON object"},
		{"number", `42`, "not a JSON object"},
		{"two objects on a line", `{"id":1}{"id":2}`, "after top-level value"},
		{"trailing garbage", `{"id":1} x`, "invalid character"},
		{"id as string", `{"id":"1"}`, "id: got a string, want a number"},
		{"negative id", `{"id":-1}`, "id: number -1 does not fit"},
		{"fractional id", `{"id":1.5}`, "does not fit"},
		{"exponent id", `{"id":1e3}`, "does not fit"},
		{"id overflow", `{"id":4294967296}`, "does not fit"},
		{"channel as number", `{"id":1,"subscribe":{"channel":1}}`, "subscribe: channel: got a number, want a string"},
		{"map value type", `{"id":1,"connect":{"headers":{"a":1}}}`, "connect: headers: key \"a\""},
		{"filter node type", `{"id":1,"subscribe":{"tf":{"nodes":[{"vals":[1]}]}}}`, "element 0"},
		{"request not an object", `{"id":1,"publish":"x"}`, "publish"},
		{"offset overflow", `{"id":1,"subscribe":{"channel":"c","offset":18446744073709551616}}`, "subscribe"},
		{"bool as string", `{"id":1,"subscribe":{"recover":"true"}}`, "subscribe"},
		{"invalid UTF-8 outside strings", "{\"id\":1,\xff}", "invalid UTF-8"},
		{"invalid UTF-8 in payload", "{\"id\":1,\"publish\":{\"data\":\"\xff\"}}", "invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := DecodeCommands(TypeJSON, []byte(tt.frame))
			if err == nil {
				t.Fatalf("no error, got %v", cmds)
			}
			if cmds != nil {
				t.Errorf("commands returned with the error: %v", cmds)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("error %q does not mention %q", err, tt.errHas)
			}
		})
	}
}

func TestDecodeCommandsProtobuf(t *testing.T) {
	one := func(c *Command) []byte {
		b, err := AppendCommand(TypeProtobuf, nil, c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pub := &Command{Id: 3, Publish: &PublishRequest{Channel: "c", Data: []byte{0, 1, 2}}}

	t.Run("pong is one zero byte", func(t *testing.T) {
		cmds, err := DecodeCommands(TypeProtobuf, []byte{0x00})
		if err != nil {
			t.Fatal(err)
		}
		if len(cmds) != 1 || !cmds[0].Empty() || cmds[0].Id != 0 {
			t.Fatalf("got %v", cmds)
		}
	})
	t.Run("empty frame", func(t *testing.T) {
		cmds, err := DecodeCommands(TypeProtobuf, nil)
		if err != nil || len(cmds) != 0 {
			t.Fatalf("got %v, %v", cmds, err)
		}
	})
	t.Run("batch", func(t *testing.T) {
		var frame []byte
		frame = AppendMessage(TypeProtobuf, frame, one(pub))
		frame = AppendMessage(TypeProtobuf, frame, nil)
		frame = AppendMessage(TypeProtobuf, frame, one(&Command{Id: 4, Ping: &PingRequest{}}))
		cmds, err := DecodeCommands(TypeProtobuf, frame)
		if err != nil {
			t.Fatal(err)
		}
		want := []*Command{pub, {}, {Id: 4, Ping: &PingRequest{}}}
		if len(cmds) != len(want) {
			t.Fatalf("got %d commands", len(cmds))
		}
		for i := range want {
			if !proto.Equal(cmds[i], want[i]) {
				t.Errorf("command %d: got %v, want %v", i, cmds[i], want[i])
			}
		}
	})
	t.Run("unknown fields are skipped", func(t *testing.T) {
		msg := protowire.AppendTag(one(&Command{Id: 8}), 99, protowire.BytesType)
		msg = protowire.AppendBytes(msg, []byte("x"))
		cmds, err := DecodeCommands(TypeProtobuf, AppendMessage(TypeProtobuf, nil, msg))
		if err != nil {
			t.Fatal(err)
		}
		if len(cmds) != 1 || cmds[0].Id != 8 || !cmds[0].Empty() {
			t.Fatalf("got %v", cmds)
		}
	})

	long := AppendMessage(TypeProtobuf, nil, one(pub))
	malformed := []struct {
		name   string
		frame  []byte
		errHas string
	}{
		{"truncated varint", []byte{0x80}, "length prefix"},
		{"varint overflow", bytes.Repeat([]byte{0xff}, 11), "length prefix"},
		{"length beyond buffer", []byte{0x05, 0x08, 0x01}, "frame ends inside"},
		{"second message cut", append(bytes.Clone(long), long[:len(long)-1]...), "command 1"},
		{"truncated field varint", []byte{0x02, 0x08, 0x80}, "command 0"},
		{"bad wire type", []byte{0x02, 0x0f, 0x00}, "command 0"},
		{"field number zero", []byte{0x02, 0x00, 0x00}, "command 0"},
		{"nested length beyond message", []byte{0x03, 0x3a, 0x05, 0x0a}, "command 0"},
	}
	for _, tt := range malformed {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := DecodeCommands(TypeProtobuf, tt.frame)
			if err == nil {
				t.Fatalf("no error, got %v", cmds)
			}
			if cmds != nil {
				t.Errorf("commands returned with the error: %v", cmds)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("error %q does not mention %q", err, tt.errHas)
			}
		})
	}
	t.Run("short frame is errShortFrame", func(t *testing.T) {
		_, err := DecodeCommands(TypeProtobuf, []byte{0x05, 0x08})
		if !errors.Is(err, errShortFrame) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestDecodeUnknownType(t *testing.T) {
	if _, err := DecodeCommands(Type(5), []byte(`{}`)); err == nil {
		t.Error("DecodeCommands: no error for unknown type")
	}
	if _, err := DecodeReplies(Type(5), []byte(`{}`)); err == nil {
		t.Error("DecodeReplies: no error for unknown type")
	}
}

func TestDecodeRepliesPing(t *testing.T) {
	for typ, frame := range map[Type][]byte{TypeJSON: []byte(`{}`), TypeProtobuf: {0}} {
		replies, err := DecodeReplies(typ, frame)
		if err != nil {
			t.Fatal(err)
		}
		if len(replies) != 1 || !proto.Equal(replies[0], &Reply{}) {
			t.Errorf("%v: ping decoded as %v", typ, replies)
		}
	}
}
