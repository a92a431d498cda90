package protocol

import (
	"errors"
	"testing"
)

func TestSplitFrame(t *testing.T) {
	for _, tt := range []struct {
		t    Type
		msgs []string
	}{
		{TypeJSON, []string{`{"id":1}`, `{}`, `{"push":{"pub":{}}}`}},
		{TypeProtobuf, []string{"\x08\x01", "", "\x12\x00"}},
	} {
		var frame []byte
		for _, m := range tt.msgs {
			frame = AppendMessage(tt.t, frame, []byte(m))
		}
		var got []string
		if err := SplitFrame(tt.t, frame, func(msg []byte) error {
			got = append(got, string(msg))
			return nil
		}); err != nil {
			t.Fatalf("%v: %v", tt.t, err)
		}
		want := tt.msgs
		if len(got) != len(want) {
			t.Fatalf("%v: got %q, want %q", tt.t, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: message %d = %q, want %q", tt.t, i, got[i], want[i])
			}
		}
	}
	if err := SplitFrame(TypeProtobuf, []byte{5, 1, 2}, func([]byte) error { return nil }); !errors.Is(err, errShortFrame) {
		t.Fatalf("cut frame: %v, want errShortFrame", err)
	}
	stop := errors.New("stop")
	n := 0
	if err := SplitFrame(TypeJSON, []byte("{}\n{}"), func([]byte) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("stop: err %v after %d calls, want stop after 1", err, n)
	}
}
