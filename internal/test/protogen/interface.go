package protogen

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Interface fails t unless fd declares exactly the wire interface want
// describes, in the form Describe writes (one fact a line, in any order):
// the proto package, each
// service's methods with their request and response types (and which of
// them stream), and each message's fields by number with their names and
// types, and its reserved numbers and names. Comments, layout, the order
// of declarations and file options are not part of it. Tests write want
// from the interface's published definition, as facts to keep, so that a
// renumbered, renamed, retyped, added or dropped field shows up as a
// difference here.
func Interface(t testing.TB, fd protoreflect.FileDescriptor, want string) {
	t.Helper()
	gotLines, wantLines := strings.Split(Describe(fd), "\n"), strings.Split(normalize(want), "\n")
	slices.Sort(gotLines)
	slices.Sort(wantLines)
	if slices.Equal(gotLines, wantLines) {
		return
	}
	var diff []string
	for _, l := range wantLines {
		if !slices.Contains(gotLines, l) {
			diff = append(diff, "- "+l)
		}
	}
	for _, l := range gotLines {
		if !slices.Contains(wantLines, l) {
			diff = append(diff, "+ "+l)
		}
	}
	t.Errorf("%s does not declare the expected wire interface (- expected, + declared):\n%s", fd.Path(), strings.Join(diff, "\n"))
}

// normalize trims each line of a description and drops empty ones, so
// that tests may indent and space theirs.
func normalize(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Describe writes fd's wire interface one fact a line, sorted:
//
//	package centrifugal.centrifugo.proxy
//	rpc CentrifugoProxy.Connect ConnectRequest -> ConnectResponse
//	rpc CentrifugoProxy.SubscribeBidirectional stream StreamSubscribeRequest -> stream StreamSubscribeResponse
//	field ConnectResult 8 subs map<string, SubscribeOptions>
//	field Disconnect 1 code uint32
//	reserved Disconnect 3
//	enum Push.PushType 0 PUBLICATION
//
// Type names are relative to the package. Map entry messages are written
// as the map field's type, not as messages. A message without fields is
// written as "message NAME".
func Describe(fd protoreflect.FileDescriptor) string {
	pkg := string(fd.Package())
	name := func(n protoreflect.FullName) string { return strings.TrimPrefix(string(n), pkg+".") }
	lines := []string{"package " + pkg}
	for i := 0; i < fd.Services().Len(); i++ {
		s := fd.Services().Get(i)
		for j := 0; j < s.Methods().Len(); j++ {
			m := s.Methods().Get(j)
			in, out := name(m.Input().FullName()), name(m.Output().FullName())
			if m.IsStreamingClient() {
				in = "stream " + in
			}
			if m.IsStreamingServer() {
				out = "stream " + out
			}
			lines = append(lines, fmt.Sprintf("rpc %s.%s %s -> %s", s.Name(), m.Name(), in, out))
		}
	}
	var messages func(ms protoreflect.MessageDescriptors)
	messages = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			if m.IsMapEntry() {
				continue
			}
			lines = append(lines, describeMessage(m, name)...)
			messages(m.Messages())
			enums(&lines, m.Enums(), name)
		}
	}
	messages(fd.Messages())
	enums(&lines, fd.Enums(), name)
	slices.Sort(lines[1:])
	return strings.Join(lines, "\n")
}

// maxExpandedRange is the longest reserved range Describe writes number
// by number.
const maxExpandedRange = 1000

func describeMessage(m protoreflect.MessageDescriptor, name func(protoreflect.FullName) string) []string {
	msg := name(m.FullName())
	var lines []string
	if m.Fields().Len() == 0 {
		lines = append(lines, "message "+msg)
	}
	for i := 0; i < m.Fields().Len(); i++ {
		f := m.Fields().Get(i)
		line := fmt.Sprintf("field %s %d %s %s", msg, f.Number(), f.Name(), fieldType(f, name))
		if o := f.ContainingOneof(); o != nil && !o.IsSynthetic() {
			line += " oneof " + string(o.Name())
		}
		lines = append(lines, line)
	}
	for i := 0; i < m.ReservedRanges().Len(); i++ {
		// A range is written number by number, so that "reserved 1, 2, 3"
		// and "reserved 1 to 3" (the same numbers, other ranges in the
		// descriptor) describe alike; only a huge range stays one line.
		r := m.ReservedRanges().Get(i) // [start, end)
		if r[1]-r[0] > maxExpandedRange {
			lines = append(lines, fmt.Sprintf("reserved %s %d to %d", msg, r[0], r[1]-1))
			continue
		}
		for n := r[0]; n < r[1]; n++ {
			lines = append(lines, fmt.Sprintf("reserved %s %d", msg, n))
		}
	}
	for i := 0; i < m.ReservedNames().Len(); i++ {
		lines = append(lines, fmt.Sprintf("reserved %s %q", msg, m.ReservedNames().Get(i)))
	}
	return lines
}

func enums(lines *[]string, es protoreflect.EnumDescriptors, name func(protoreflect.FullName) string) {
	for i := 0; i < es.Len(); i++ {
		e := es.Get(i)
		for j := 0; j < e.Values().Len(); j++ {
			v := e.Values().Get(j)
			*lines = append(*lines, fmt.Sprintf("enum %s %d %s", name(e.FullName()), v.Number(), v.Name()))
		}
	}
}

// fieldType is a field's type as a .proto file writes it, with its
// cardinality: "uint32", "repeated string", "optional bool",
// "map<string, SubscribeOptions>".
func fieldType(f protoreflect.FieldDescriptor, name func(protoreflect.FullName) string) string {
	if f.IsMap() {
		return fmt.Sprintf("map<%s, %s>", singular(f.MapKey(), name), singular(f.MapValue(), name))
	}
	t := singular(f, name)
	switch {
	case f.IsList():
		return "repeated " + t
	case f.HasOptionalKeyword():
		return "optional " + t
	}
	return t
}

func singular(f protoreflect.FieldDescriptor, name func(protoreflect.FullName) string) string {
	switch f.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return name(f.Message().FullName())
	case protoreflect.EnumKind:
		return name(f.Enum().FullName())
	}
	return f.Kind().String()
}
