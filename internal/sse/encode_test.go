package sse_test

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/sse"
	"github.com/heraldhq/herald/internal/test/ssetest"
)

// parse reads every event of stream as a browser would.
func parse(stream []byte) []ssetest.Event {
	r := ssetest.NewReader(bufio.NewReader(bytes.NewReader(stream)))
	var out []ssetest.Event
	for {
		ev, err := r.Next()
		if err != nil {
			return out
		}
		out = append(out, ev)
	}
}

// normalize is what the format can carry of b: every CRLF and CR becomes
// LF.
func normalize(b []byte) string {
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

func TestAppendEvent(t *testing.T) {
	for _, tt := range []struct {
		name  string
		event string
		data  string
		want  string
	}{
		{"plain", "", `{"a":1}`, "data: {\"a\":1}\n\n"},
		{"named", "pub", `{}`, "event: pub\ndata: {}\n\n"},
		{"CR in JSON whitespace", "", "{\"a\":\r\r1}", "data: {\"a\":\ndata: \ndata: 1}\n\n"},
		{"CRLF", "", "a\r\nb", "data: a\ndata: b\n\n"},
		{"LF", "", "a\nb", "data: a\ndata: b\n\n"},
		{"trailing CR", "", "a\r", "data: a\ndata: \n\n"},
		{"empty", "", "", "data: \n\n"},
		{"event name with a line break", "pub\r\ndata: x", "y", "event: pub\ndata: y\n\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := sse.AppendEvent(nil, tt.event, []byte(tt.data))
			if string(got) != tt.want {
				t.Fatalf("sse.AppendEvent(%q, %q) = %q, want %q", tt.event, tt.data, got, tt.want)
			}
			evs := parse(got)
			if len(evs) != 1 || evs[0].Data != normalize([]byte(tt.data)) {
				t.Fatalf("a browser reads %q as %+v, want one event with data %q", got, evs, normalize([]byte(tt.data)))
			}
		})
	}
}

// TestAppendEventAppends: the event goes after what dst holds.
func TestAppendEventAppends(t *testing.T) {
	got := sse.AppendEvent([]byte("data: 1\n\n"), "", []byte("2"))
	if !bytes.Equal(got, []byte("data: 1\n\ndata: 2\n\n")) {
		t.Fatalf("got %q", got)
	}
}

// FuzzAppendEvent: whatever the payload, a browser parses the encoder's
// output as exactly one event of the given name whose data is the payload
// with its line breaks as LF, and two events in a row stay two.
func FuzzAppendEvent(f *testing.F) {
	for _, s := range []string{"", "{\"a\":\r\r1}", "a\r\nb", "\r", "\n", "\r\n\r\n", "data: x\n\nevent: y", ":comment", "\x00\xff"} {
		f.Add("pub", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if strings.ContainsAny(name, "\r\n") || name == "" {
			name = "pub"
		}
		out := sse.AppendEvent(nil, name, data)
		out = sse.AppendEvent(out, "", []byte("next"))
		evs := parse(out)
		want := []ssetest.Event{{Name: name, Data: normalize(data)}, {Name: "message", Data: "next"}}
		if len(evs) != 2 || evs[0] != want[0] || evs[1] != want[1] {
			t.Fatalf("sse.AppendEvent(%q, %q) = %q, parsed as %+v, want %+v", name, data, out, evs, want)
		}
	})
}
