package protocol

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

// The exchange recorded against Centrifugo v6.9.1 in Appendix A of the
// protocol notes. Client lines are decoded; server frames are rebuilt from
// Reply values and must match the recording byte for byte, with the elided
// client id filled in.

const appendixClientID = "5a6f1e2c-8a3b-4b7e-9d21-0c4f7a9b3e11"

func appendixInfo() *ClientInfo {
	return &ClientInfo{User: "user1", Client: appendixClientID}
}

func appendixJoin() *Reply {
	return &Reply{Push: &Push{Channel: "chat", Join: &Join{Info: appendixInfo()}}}
}

type appendixStep struct {
	client string
	want   *Command // the decoded client line
	// reply builds the server's messages from the decoded command, as the
	// server would; nil for the closing step.
	reply  func(t *testing.T, cmd *Command) []*Reply
	server string // the recorded frame; ⏎ separates batched messages
}

func appendixSteps() []appendixStep {
	denied := func(id uint32) func(*testing.T, *Command) []*Reply {
		return func(*testing.T, *Command) []*Reply {
			return []*Reply{{Id: id, Error: NewError(ErrorPermissionDenied)}}
		}
	}
	return []appendixStep{
		{
			client: `{"id": 1, "connect": {"token": "<JWT for user user1>", "name": "trace"}}`,
			want:   &Command{Id: 1, Connect: &ConnectRequest{Token: "<JWT for user user1>", Name: "trace"}},
			reply: func(*testing.T, *Command) []*Reply {
				return []*Reply{{Id: 1, Connect: &ConnectResult{
					Client: appendixClientID, Version: "0.0.0 OSS", Expires: true, Ttl: 604702, Ping: 25, Pong: true,
				}}}
			},
			server: `{"id":1,"connect":{"client":"<client-id>","version":"0.0.0 OSS","expires":true,"ttl":604702,"ping":25,"pong":true}}`,
		},
		{
			client: `{"id": 2, "subscribe": {"channel": "chat", "flag": 1}}`,
			want:   &Command{Id: 2, Subscribe: &SubscribeRequest{Channel: "chat", Flag: 1}},
			reply: func(*testing.T, *Command) []*Reply {
				return []*Reply{
					{Id: 2, Subscribe: &SubscribeResult{Recoverable: true, Epoch: "MjmHRReq", Offset: 2, Positioned: true}},
					appendixJoin(),
				}
			},
			server: `{"id":2,"subscribe":{"recoverable":true,"epoch":"MjmHRReq","offset":2,"positioned":true}} ⏎ {"push":{"channel":"chat","join":{"info":{"user":"user1","client":"<client-id>"}}}}`,
		},
		{
			client: `{"id": 3, "publish": {"channel": "chat", "data": {"text": "hi"}}}`,
			want:   &Command{Id: 3, Publish: &PublishRequest{Channel: "chat", Data: []byte(`{"text": "hi"}`)}},
			reply: func(_ *testing.T, cmd *Command) []*Reply {
				return []*Reply{
					{Push: &Push{Channel: cmd.Publish.Channel, Pub: &Publication{Data: cmd.Publish.Data, Info: appendixInfo(), Offset: 3}}},
					{Id: cmd.Id, Publish: &PublishResult{}},
				}
			},
			server: `{"push":{"channel":"chat","pub":{"data":{"text": "hi"},"info":{"user":"user1","client":"<client-id>"},"offset":3}}} ⏎ {"id":3,"publish":{}}`,
		},
		{
			client: `{"id": 4, "presence": {"channel": "chat"}}`,
			want:   &Command{Id: 4, Presence: &PresenceRequest{Channel: "chat"}},
			reply:  denied(4),
			server: `{"id":4,"error":{"code":103,"message":"permission denied"}}`,
		},
		{
			client: `{"id": 41, "presence_stats": {"channel": "chat"}}`,
			want:   &Command{Id: 41, PresenceStats: &PresenceStatsRequest{Channel: "chat"}},
			reply:  denied(41),
			server: `{"id":41,"error":{"code":103,"message":"permission denied"}}`,
		},
		{
			client: `{"id": 5, "history": {"channel": "chat", "limit": 10}}`,
			want:   &Command{Id: 5, History: &HistoryRequest{Channel: "chat", Limit: 10}},
			reply:  denied(5),
			server: `{"id":5,"error":{"code":103,"message":"permission denied"}}`,
		},
		{
			client: `{"id": 6, "subscribe": {"channel": "nons:x"}}`,
			want:   &Command{Id: 6, Subscribe: &SubscribeRequest{Channel: "nons:x"}},
			reply: func(*testing.T, *Command) []*Reply {
				return []*Reply{{Id: 6, Error: NewError(ErrorUnknownChannel)}}
			},
			server: `{"id":6,"error":{"code":102,"message":"unknown channel"}}`,
		},
		{
			client: `{"id": 7, "subscribe": {"channel": "chat"}}`,
			want:   &Command{Id: 7, Subscribe: &SubscribeRequest{Channel: "chat"}},
			reply: func(*testing.T, *Command) []*Reply {
				return []*Reply{{Id: 7, Error: NewError(ErrorAlreadySubscribed)}}
			},
			server: `{"id":7,"error":{"code":105,"message":"already subscribed"}}`,
		},
		{
			client: `{"id": 71, "unsubscribe": {"channel": "chat"}}`,
			want:   &Command{Id: 71, Unsubscribe: &UnsubscribeRequest{Channel: "chat"}},
			reply: func(*testing.T, *Command) []*Reply {
				return []*Reply{{Id: 71, Unsubscribe: &UnsubscribeResult{}}}
			},
			server: `{"id":71,"unsubscribe":{}}`,
		},
		{
			client: `{"id": 72, "subscribe": {"channel": "chat", "recover": true, "offset": 0, "epoch": "bogus"}}`,
			want:   &Command{Id: 72, Subscribe: &SubscribeRequest{Channel: "chat", Recover: true, Epoch: "bogus"}},
			reply: func(*testing.T, *Command) []*Reply {
				return []*Reply{
					{Id: 72, Subscribe: &SubscribeResult{Recoverable: true, Epoch: "MjmHRReq", Offset: 3, Positioned: true, WasRecovering: true}},
					appendixJoin(),
				}
			},
			server: `{"id":72,"subscribe":{"recoverable":true,"epoch":"MjmHRReq","offset":3,"positioned":true,"was_recovering":true}} ⏎ {"push":{"channel":"chat","join":{"info":{"user":"user1","client":"<client-id>"}}}}`,
		},
		{
			client: `{"id":9,"rpc":{"method":"x","data":{}}}`,
			want:   &Command{Id: 9, Rpc: &RPCRequest{Method: "x", Data: []byte(`{}`)}},
			reply: func(*testing.T, *Command) []*Reply {
				return []*Reply{{Id: 9, Error: NewError(ErrorNotAvailable)}}
			},
			server: `{"id":9,"error":{"code":108,"message":"not available"}}`,
		},
		{
			client: `{"id":8,"foo":{}}`,
			want:   &Command{Id: 8},
		},
	}
}

func TestAppendixExchange(t *testing.T) {
	for _, step := range appendixSteps() {
		cmds, err := DecodeCommands(TypeJSON, []byte(step.client))
		if err != nil {
			t.Fatalf("decode %s: %v", step.client, err)
		}
		if len(cmds) != 1 || !proto.Equal(cmds[0], step.want) {
			t.Fatalf("decode %s:\n got %v\nwant %v", step.client, cmds, step.want)
		}
		cmd := cmds[0]
		if step.reply == nil {
			// The server closes with 3501 bad request.
			if !cmd.Empty() || cmd.Id == 0 {
				t.Fatalf("%s: Empty()=%v Id=%d, want an empty command with an id", step.client, cmd.Empty(), cmd.Id)
			}
			if DisconnectBadRequest != 3501 || DisconnectBadRequest.Reason() != "bad request" {
				t.Fatalf("bad request disconnect = %d %q", DisconnectBadRequest, DisconnectBadRequest.Reason())
			}
			continue
		}
		if cmd.Empty() {
			t.Fatalf("%s: Empty() = true", step.client)
		}
		replies := step.reply(t, cmd)

		var frame []byte
		for _, r := range replies {
			msg, err := AppendReply(TypeJSON, nil, r)
			if err != nil {
				t.Fatal(err)
			}
			frame = AppendMessage(TypeJSON, frame, msg)
		}
		want := strings.ReplaceAll(step.server, "<client-id>", appendixClientID)
		want = strings.ReplaceAll(want, " ⏎ ", "\n")
		if string(frame) != want {
			t.Errorf("reply to %s:\n got %s\nwant %s", step.client, frame, want)
		}

		// The same replies through Protobuf framing decode to the same values.
		var pbFrame []byte
		for _, r := range replies {
			msg, err := AppendReply(TypeProtobuf, nil, r)
			if err != nil {
				t.Fatal(err)
			}
			pbFrame = AppendMessage(TypeProtobuf, pbFrame, msg)
		}
		for _, tc := range []struct {
			typ   Type
			frame []byte
		}{{TypeJSON, frame}, {TypeProtobuf, pbFrame}} {
			got, err := DecodeReplies(tc.typ, tc.frame)
			if err != nil {
				t.Fatalf("%v: decode replies to %s: %v", tc.typ, step.client, err)
			}
			if len(got) != len(replies) {
				t.Fatalf("%v: %d replies, want %d", tc.typ, len(got), len(replies))
			}
			for i := range got {
				if !proto.Equal(got[i], replies[i]) {
					t.Errorf("%v: reply %d to %s:\n got %v\nwant %v", tc.typ, i, step.client, got[i], replies[i])
				}
			}
		}
	}
}

// The publication push is what AppendPush encodes once for all subscribers;
// it must equal the Reply-wrapped form.
func TestAppendixPushViaAppendPush(t *testing.T) {
	push := &Push{Channel: "chat", Pub: &Publication{Data: []byte(`{"text": "hi"}`), Info: appendixInfo(), Offset: 3}}
	want := `{"push":{"channel":"chat","pub":{"data":{"text": "hi"},"info":{"user":"user1","client":"` + appendixClientID + `"},"offset":3}}}`
	got, err := AppendPush(TypeJSON, nil, push)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("AppendPush:\n got %s\nwant %s", got, want)
	}
	pb, err := AppendPush(TypeProtobuf, nil, push)
	if err != nil {
		t.Fatal(err)
	}
	wrapped, err := proto.MarshalOptions{Deterministic: true}.Marshal(&Reply{Push: push})
	if err != nil {
		t.Fatal(err)
	}
	if string(pb) != string(wrapped) {
		t.Errorf("AppendPush protobuf = %x, want %x", pb, wrapped)
	}
}
