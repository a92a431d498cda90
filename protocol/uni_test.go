package protocol

import "testing"

func TestReplyToPush(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *Reply
		want string
	}{
		{"publication", &Reply{Push: &Push{Channel: "news", Pub: &Publication{Data: []byte(`{"a":1}`), Offset: 3}}}, `{"channel":"news","pub":{"data":{"a":1},"offset":3}}`},
		{"ping", &Reply{}, `{}`},
		{"connect", &Reply{Id: 1, Connect: &ConnectResult{Client: "c1", Version: "v", Ping: 25, Session: "s", Node: "n"}}, `{"connect":{"client":"c1","version":"v","ping":25,"session":"s","node":"n"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, typ := range []Type{TypeJSON, TypeProtobuf} {
				msg, err := AppendReply(typ, nil, tc.r)
				if err != nil {
					t.Fatal(err)
				}
				got, err := ReplyToPush(typ, nil, msg)
				if err != nil {
					t.Fatalf("%v: %v", typ, err)
				}
				if typ == TypeJSON {
					if string(got) != tc.want {
						t.Fatalf("json: got %s, want %s", got, tc.want)
					}
					continue
				}
				var p Push
				if err := p.UnmarshalVT(got); err != nil {
					t.Fatalf("protobuf: %v", err)
				}
				if tc.r.Connect != nil && (p.Connect == nil || p.Connect.Session != "s" || p.Connect.Client != "c1") {
					t.Fatalf("protobuf connect push: %v", &p)
				}
				if tc.r.Push != nil && (p.Pub == nil || p.Channel != "news" || p.Pub.Offset != 3) {
					t.Fatalf("protobuf pub push: %v", &p)
				}
			}
		})
	}
	for _, typ := range []Type{TypeJSON, TypeProtobuf} {
		msg, _ := AppendReply(typ, nil, &Reply{Id: 2, Error: &Error{Code: 103, Message: "permission denied"}})
		if _, err := ReplyToPush(typ, nil, msg); err == nil {
			t.Fatalf("%v: an error reply has no push form, want an error", typ)
		}
	}
}
