package protocol

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// fill sets every field of m, recursively, to a non-zero value, so that a
// round trip shows whether an encoder forgot a field. Messages that contain
// themselves (FilterNode) stop nesting at depth 3.
func fill(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Message() == m.Descriptor() && depth >= 3 {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for j := range 2 {
				k := protoreflect.ValueOfString(fmt.Sprintf("key-%d \"ü\"", j)).MapKey()
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					v := mp.NewValue()
					fill(v.Message(), depth+1)
					mp.Set(k, v)
				} else {
					mp.Set(k, scalar(fd.MapValue(), j))
				}
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for j := range 2 {
				if fd.Kind() == protoreflect.MessageKind {
					v := l.NewElement()
					fill(v.Message(), depth+1)
					l.Append(v)
				} else {
					l.Append(scalar(fd, j))
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			fill(m.Mutable(fd).Message(), depth+1)
		default:
			m.Set(fd, scalar(fd, int(fd.Number())))
		}
	}
}

// scalar returns a non-zero value of fd's kind. Integers exceed 32 bits
// where the type allows, to show that 64-bit values survive as JSON
// numbers; strings need escaping; bytes are embedded JSON.
func scalar(fd protoreflect.FieldDescriptor, n int) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(-int32(n) - 1)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(n) + 4_000_000_000)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(-int64(n) - 1<<53)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(n) + 1<<63)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fmt.Sprintf("s%d \"q\" \\ \n\t\x01 </é> 😀 \u2028", n))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(fmt.Appendf(nil, `{"n": %d, "a": [true, null, "x\ny"]}`, n))
	}
	panic(fmt.Sprintf("no scalar for %v", fd.Kind()))
}

func filledReply() *Reply {
	r := &Reply{}
	fill(r.ProtoReflect(), 0)
	return r
}

func filledCommand() *Command {
	c := &Command{}
	fill(c.ProtoReflect(), 0)
	return c
}

func TestRoundTripFilled(t *testing.T) {
	for _, typ := range []Type{TypeJSON, TypeProtobuf} {
		t.Run(typ.String(), func(t *testing.T) {
			reply := filledReply()
			b, err := AppendReply(typ, nil, reply)
			if err != nil {
				t.Fatal(err)
			}
			replies, err := DecodeReplies(typ, AppendMessage(typ, nil, b))
			if err != nil {
				t.Fatal(err)
			}
			if len(replies) != 1 || !proto.Equal(replies[0], reply) {
				t.Errorf("reply round trip:\n got %v\nwant %v", replies, reply)
			}

			cmd := filledCommand()
			b, err = AppendCommand(typ, nil, cmd)
			if err != nil {
				t.Fatal(err)
			}
			cmds, err := DecodeCommands(typ, AppendMessage(typ, nil, b))
			if err != nil {
				t.Fatal(err)
			}
			if len(cmds) != 1 || !proto.Equal(cmds[0], cmd) {
				t.Errorf("command round trip:\n got %v\nwant %v", cmds, cmd)
			}
		})
	}
}

// TestRoundTripEachMessage sends every result and push alone, as servers do,
// batched into one frame.
func TestRoundTripEachMessage(t *testing.T) {
	full := filledReply()
	var replies []*Reply
	rr := full.ProtoReflect()
	rr.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.Name() == "error" {
			return true
		}
		if fd.Name() == "push" {
			pr := v.Message()
			pr.Range(func(pfd protoreflect.FieldDescriptor, pv protoreflect.Value) bool {
				if pfd.Kind() == protoreflect.MessageKind {
					p := &Push{Id: 5, Channel: "ch"}
					p.ProtoReflect().Set(pfd, pv)
					replies = append(replies, &Reply{Push: p})
				}
				return true
			})
			return true
		}
		r := &Reply{Id: uint32(fd.Number())}
		r.ProtoReflect().Set(fd, v)
		replies = append(replies, r)
		return true
	})
	replies = append(replies, &Reply{Id: 3, Error: NewError(ErrorTooManyRequests)}, &Reply{})
	if len(replies) != 12+9+1 {
		t.Fatalf("built %d replies, want every result and push", len(replies))
	}

	full2 := filledCommand()
	var cmds []*Command
	full2.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() == protoreflect.MessageKind {
			c := &Command{Id: uint32(fd.Number())}
			c.ProtoReflect().Set(fd, v)
			cmds = append(cmds, c)
		}
		return true
	})
	cmds = append(cmds, &Command{})
	if len(cmds) != 12+1 {
		t.Fatalf("built %d commands, want every request", len(cmds))
	}

	for _, typ := range []Type{TypeJSON, TypeProtobuf} {
		var frame []byte
		for _, r := range replies {
			b, err := AppendReply(typ, nil, r)
			if err != nil {
				t.Fatal(err)
			}
			frame = AppendMessage(typ, frame, b)
		}
		got, err := DecodeReplies(typ, frame)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		if len(got) != len(replies) {
			t.Fatalf("%v: %d replies, want %d", typ, len(got), len(replies))
		}
		for i := range got {
			if !proto.Equal(got[i], replies[i]) {
				t.Errorf("%v: reply %d:\n got %v\nwant %v", typ, i, got[i], replies[i])
			}
		}

		frame = frame[:0]
		for _, c := range cmds {
			b, err := AppendCommand(typ, nil, c)
			if err != nil {
				t.Fatal(err)
			}
			frame = AppendMessage(typ, frame, b)
		}
		gotCmds, err := DecodeCommands(typ, frame)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		if len(gotCmds) != len(cmds) {
			t.Fatalf("%v: %d commands, want %d", typ, len(gotCmds), len(cmds))
		}
		for i := range gotCmds {
			if !proto.Equal(gotCmds[i], cmds[i]) {
				t.Errorf("%v: command %d:\n got %v\nwant %v", typ, i, gotCmds[i], cmds[i])
			}
		}
	}
}

// TestJSONKeysFollowFieldNumbers walks the JSON of fully set messages and
// checks, for every object, that its keys are exactly the proto field names
// in field-number order, as Centrifugo writes them.
func TestJSONKeysFollowFieldNumbers(t *testing.T) {
	reply := filledReply()
	b, err := AppendReply(TypeJSON, nil, reply)
	if err != nil {
		t.Fatal(err)
	}
	checkKeyOrder(t, b, reply.ProtoReflect().Descriptor())

	cmd := filledCommand()
	b, err = AppendCommand(TypeJSON, nil, cmd)
	if err != nil {
		t.Fatal(err)
	}
	checkKeyOrder(t, b, cmd.ProtoReflect().Descriptor())
}

func checkKeyOrder(t *testing.T, b []byte, md protoreflect.MessageDescriptor) {
	t.Helper()
	if !json.Valid(b) {
		t.Fatalf("invalid JSON: %s", b)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := walkMessage(dec, md, md.FullName()); err != nil {
		t.Fatalf("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("trailing data after message: %v", err)
	}
}

func walkMessage(dec *json.Decoder, md protoreflect.MessageDescriptor, path protoreflect.FullName) error {
	if err := wantDelim(dec, '{'); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var last protoreflect.FieldNumber
	seen := map[protoreflect.Name]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name := tok.(string)
		fd := md.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			return fmt.Errorf("%s: unknown key %q", path, name)
		}
		if fd.Number() <= last {
			return fmt.Errorf("%s: key %q (field %d) after field %d", path, name, fd.Number(), last)
		}
		last = fd.Number()
		seen[fd.Name()] = true
		if err := walkValue(dec, fd, path+"."+protoreflect.FullName(name)); err != nil {
			return err
		}
	}
	for i := 0; i < md.Fields().Len(); i++ {
		// fill leaves out a message's own type once deep enough.
		if fd := md.Fields().Get(i); !seen[fd.Name()] && fd.Message() != md {
			return fmt.Errorf("%s: no key %q", path, fd.Name())
		}
	}
	return wantDelim(dec, '}')
}

func walkValue(dec *json.Decoder, fd protoreflect.FieldDescriptor, path protoreflect.FullName) error {
	switch {
	case fd.IsMap():
		if err := wantDelim(dec, '{'); err != nil {
			return err
		}
		for dec.More() {
			if _, err := dec.Token(); err != nil {
				return err
			}
			if err := walkValue(dec, fd.MapValue(), path+"[]"); err != nil {
				return err
			}
		}
		return wantDelim(dec, '}')
	case fd.IsList():
		if err := wantDelim(dec, '['); err != nil {
			return err
		}
		for dec.More() {
			if fd.Kind() == protoreflect.MessageKind {
				if err := walkMessage(dec, fd.Message(), path+"[]"); err != nil {
					return err
				}
			} else if _, err := dec.Token(); err != nil {
				return err
			}
		}
		return wantDelim(dec, ']')
	case fd.Kind() == protoreflect.MessageKind:
		return walkMessage(dec, fd.Message(), path)
	case fd.Kind() == protoreflect.BytesKind:
		var raw json.RawMessage
		return dec.Decode(&raw)
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	var ok bool
	switch fd.Kind() {
	case protoreflect.BoolKind:
		_, ok = tok.(bool)
	case protoreflect.StringKind:
		_, ok = tok.(string)
	default:
		// Every other scalar is an integer, written as a plain JSON number.
		var n json.Number
		if n, ok = tok.(json.Number); ok {
			_, errInt := strconv.ParseInt(string(n), 10, 64)
			_, errUint := strconv.ParseUint(string(n), 10, 64)
			ok = errInt == nil || errUint == nil
		}
	}
	if !ok {
		return fmt.Errorf("%s: %v kind written as %T %v", path, fd.Kind(), tok, tok)
	}
	return nil
}

func wantDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("got %v, want %v", tok, d)
	}
	return nil
}
