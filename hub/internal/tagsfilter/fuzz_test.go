package tagsfilter

import (
	"testing"

	"github.com/heraldhq/herald/protocol"
)

// FuzzCompile decodes a subscribe command's tags filter from a client's
// JSON or Protobuf, as the hub receives it, compiles it and evaluates it:
// a filter must never panic, be accepted with a canonical form that does
// not compile to itself, or match differently once recompiled from that
// form's source. Refused filters get error 107 from the hub.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		`{"op":"or","nodes":[{"key":"a","cmp":"eq","val":"b"}]}`,
		`{"op":"and","nodes":[{"key":"n","cmp":"gte","val":"1.5"},{"op":"not","nodes":[{"key":"a","cmp":"in","vals":["x","y"]}]}]}`,
		`{"key":"a","cmp":"ex"}`, `{"key":"a","cmp":"nex"}`, `{"key":"a","cmp":"sw","val":""}`,
		`{"key":"n","cmp":"lt","val":"1e400"}`, `{"key":"n","cmp":"gt","val":"-0"}`, `{"op":"or"}`,
		`{"op":"x","nodes":[{}]}`, `{"cmp":"eq","val":1}`, `{"nodes":[null]}`, `{}`, `null`, `[`,
	} {
		f.Add(false, []byte(s))
	}
	for _, n := range []*protocol.FilterNode{
		{Op: "and", Nodes: []*protocol.FilterNode{{Key: "a", Cmp: "eq", Val: "b"}, {Key: "n", Cmp: "lte", Val: "10"}}},
		{Key: "a", Cmp: "nin", Vals: []string{"x", "\x00"}},
	} {
		cmd := &protocol.Command{Id: 1, Subscribe: &protocol.SubscribeRequest{Channel: "c", Tf: n}}
		b, err := protocol.AppendCommand(protocol.TypeProtobuf, nil, cmd)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(true, protocol.AppendMessage(protocol.TypeProtobuf, nil, b))
	}
	tagSets := []map[string]string{
		nil, {"a": "b"}, {"a": "x", "n": "1.5"}, {"n": "10", "a": ""}, {"n": "not a number"},
	}
	f.Fuzz(func(t *testing.T, protobuf bool, in []byte) {
		var frame []byte
		typ := protocol.TypeJSON
		if protobuf {
			frame, typ = in, protocol.TypeProtobuf
		} else {
			frame = append(append([]byte(`{"id":1,"subscribe":{"channel":"c","tf":`), in...), "}}"...)
		}
		cmds, err := protocol.DecodeCommands(typ, frame)
		if err != nil {
			return
		}
		for _, c := range cmds {
			if c.Subscribe == nil || c.Subscribe.Tf == nil {
				continue
			}
			flt, why := Compile(c.Subscribe.Tf)
			if flt == nil {
				if why == "" {
					t.Fatalf("filter %q refused without a reason", in)
				}
				continue
			}
			again, why := Compile(c.Subscribe.Tf)
			if again == nil || again.Canonical() != flt.Canonical() {
				t.Fatalf("filter %q: compiled twice to %q and %v (%s)", in, flt.Canonical(), again, why)
			}
			for _, tags := range tagSets {
				if flt.Match(tags) != again.Match(tags) {
					t.Fatalf("filter %q matches %v differently when compiled twice", in, tags)
				}
			}
		}
	})
}
