package nats

import (
	"testing"
	"time"
)

func TestEscapeToken(t *testing.T) {
	cases := map[string]string{
		"chat:room_1-a": "chat:room_1-a",
		"a.b":           "a%2Eb",
		"a%2Eb":         "a%252Eb",
		"x*>y":          "x%2A%3Ey",
		"with space":    "with%20space",
		"tab\t\x7f":     "tab%09%7F",
	}
	for in, want := range cases {
		if got := escapeToken(in); got != want {
			t.Errorf("escapeToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func frag(origin string, id, index, count uint64, chunk string) fragment {
	f, err := decodeFragment(appendFragment(nil, fragment{origin, id, index, count, []byte(chunk)})[1:])
	if err != nil {
		panic(err)
	}
	return f
}

func TestReassembler(t *testing.T) {
	r := reassembler{timeout: time.Second, maxSize: 100}
	now := time.Now()
	// Two messages interleaved, one from each origin.
	steps := []struct {
		f    fragment
		want string
	}{
		{frag("a", 1, 0, 2, "hel"), ""},
		{frag("b", 1, 0, 3, "wo"), ""},
		{frag("a", 1, 1, 2, "lo"), "hello"},
		{frag("b", 1, 1, 3, "rl"), ""},
		{frag("b", 1, 2, 3, "d"), "world"},
	}
	for i, s := range steps {
		msg, dropped := r.add(s.f, now)
		if string(msg) != s.want || dropped {
			t.Fatalf("step %d: got %q dropped=%v, want %q", i, msg, dropped, s.want)
		}
	}
	// A lost middle fragment drops the message.
	r.add(frag("a", 2, 0, 3, "x"), now)
	if msg, dropped := r.add(frag("a", 2, 2, 3, "z"), now); msg != nil || !dropped {
		t.Errorf("message with a lost fragment: %q dropped=%v", msg, dropped)
	}
	// A message whose start was lost is dropped.
	if msg, dropped := r.add(frag("a", 3, 1, 2, "y"), now); msg != nil || !dropped {
		t.Errorf("message without its start: %q dropped=%v", msg, dropped)
	}
	// A partial message is forgotten after the timeout.
	r.add(frag("c", 1, 0, 2, "p"), now)
	if _, dropped := r.add(frag("d", 1, 0, 1, "q"), now.Add(2*time.Second)); !dropped || len(r.parts) != 0 {
		t.Errorf("stale partial kept: dropped=%v, %d partials", dropped, len(r.parts))
	}
	// Too large.
	r.add(frag("e", 1, 0, 2, string(make([]byte, 60))), now)
	if msg, dropped := r.add(frag("e", 1, 1, 2, string(make([]byte, 60))), now); msg != nil || !dropped {
		t.Errorf("oversized message: %d bytes, dropped=%v", len(msg), dropped)
	}
	for _, bad := range [][]byte{appendFragment(nil, fragment{count: 0})[1:], appendFragment(nil, fragment{index: 2, count: 2})[1:]} {
		if _, err := decodeFragment(bad); err == nil {
			t.Errorf("bad fragment %x decoded", bad)
		}
	}
}
