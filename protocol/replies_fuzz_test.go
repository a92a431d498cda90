package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

// FuzzDecodeReplies feeds arbitrary frames to both reply decoders, as a
// client (or the load generator) reads them. Neither may panic. A frame
// that decodes must encode again: Protobuf back to equal replies, JSON to
// valid JSON that decodes to equal replies.
func FuzzDecodeReplies(f *testing.F) {
	for _, step := range appendixSteps() {
		f.Add([]byte(strings.ReplaceAll(step.server, " ⏎ ", "\n")))
	}
	for _, s := range []string{
		"", "{}", "{}\n{}", `{"id":1,"error":{"code":100,"message":"internal"}}`,
		`{"push":{"channel":"c","pub":{"data":{"a":1},"offset":3,"tags":{"k":"v"}}}}`,
		`{"id":2,"subscribe":{"publications":[{"data":null}],"data":"x"}}`,
		`{"id":3,"rpc":{"data":[1,2]}}`, `{"push":{"disconnect":{"code":3000,"reason":"r"}}}`,
		`[1]`, `null`, `{"id":1`, "\x00", "\x05\x08\x01",
	} {
		f.Add([]byte(s))
	}
	for _, typ := range []Type{TypeJSON, TypeProtobuf} {
		b, err := AppendReply(typ, nil, filledReply())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(AppendMessage(typ, nil, b))
	}

	f.Fuzz(func(t *testing.T, frame []byte) {
		if replies, err := DecodeReplies(TypeJSON, frame); err == nil {
			for _, r := range replies {
				b, err := AppendReply(TypeJSON, nil, r)
				if err != nil {
					// The encoder trusts payloads to be valid JSON; a
					// decoded reply's payloads came from JSON, so this
					// must not fail.
					t.Fatalf("re-encoding %v: %v", r, err)
				}
				if !json.Valid(b) {
					t.Fatalf("re-encoded reply is not valid JSON: %s", b)
				}
				again, err := DecodeReplies(TypeJSON, b)
				if err != nil || len(again) != 1 {
					t.Fatalf("re-encoded reply %s does not decode: %v", b, err)
				}
				if !proto.Equal(again[0], r) {
					t.Fatalf("reply changed on its round trip: %v then %v", r, again[0])
				}
			}
		}
		if replies, err := DecodeReplies(TypeProtobuf, frame); err == nil {
			var out []byte
			for _, r := range replies {
				b, err := AppendReply(TypeProtobuf, nil, r)
				if err != nil {
					t.Fatal(err)
				}
				out = AppendMessage(TypeProtobuf, out, b)
			}
			again, err := DecodeReplies(TypeProtobuf, out)
			if err != nil || len(again) != len(replies) {
				t.Fatalf("re-encoded replies do not decode: %v", err)
			}
			for i := range replies {
				if !proto.Equal(again[i], replies[i]) {
					t.Fatalf("reply %d changed: %v then %v", i, replies[i], again[i])
				}
			}
		}
	})
}
