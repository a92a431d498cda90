package nats

import (
	"bytes"
	"testing"
	"time"
)

// FuzzDecodeFragment checks that decoding a fragment never panics, that
// what decodes is a fragment the reassembler can take (count > 0, index <
// count), and that it encodes and decodes to the same fragment.
func FuzzDecodeFragment(f *testing.F) {
	for _, fr := range []fragment{
		{"origin-a", 1, 0, 2, []byte("hel")},
		{"", 0, 0, 1, nil},
		{"n\x00\xff", 1 << 63, 5, 6, bytes.Repeat([]byte{0xff}, 40)},
	} {
		f.Add(appendFragment(nil, fr)[1:])
	}
	f.Add([]byte{})
	f.Add([]byte{0x08, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := decodeFragment(b)
		if err != nil {
			return
		}
		if fr.count == 0 || fr.index >= fr.count {
			t.Fatalf("decoded an impossible fragment %+v", fr)
		}
		again, err := decodeFragment(appendFragment(nil, fr)[1:])
		if err != nil || again.origin != fr.origin || again.id != fr.id || again.index != fr.index ||
			again.count != fr.count || !bytes.Equal(again.chunk, fr.chunk) {
			t.Fatalf("re-encoding %+v gave %+v, %v", fr, again, err)
		}
	})
}

// FuzzReassembler feeds a stream of NATS messages, as one subscription
// receives them, through the fragment decoder and the reassembler. The
// input is a sequence of messages, each a length byte and that many
// bytes. Nothing may panic, no message larger than the limit comes out,
// and partial messages are never kept past the timeout.
func FuzzReassembler(f *testing.F) {
	frame := func(frs ...fragment) []byte {
		var out []byte
		for _, fr := range frs {
			b := appendFragment(nil, fr)
			out = append(append(out, byte(len(b))), b...)
		}
		return out
	}
	f.Add(frame(fragment{"a", 1, 0, 2, []byte("hel")}, fragment{"b", 1, 0, 3, []byte("wo")},
		fragment{"a", 1, 1, 2, []byte("lo")}, fragment{"b", 1, 1, 3, []byte("rl")}, fragment{"b", 1, 2, 3, []byte("d")}))
	f.Add(frame(fragment{"a", 2, 0, 3, []byte("x")}, fragment{"a", 2, 2, 3, []byte("z")}, fragment{"a", 3, 1, 2, []byte("y")}))
	f.Add(frame(fragment{"e", 1, 0, 2, make([]byte, 60)}, fragment{"e", 1, 1, 2, make([]byte, 60)}))
	f.Add(frame(fragment{"big", 1, 0, 1 << 62, []byte("abc")}))
	const maxSize = 100
	timeout := time.Second
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := reassembler{timeout: timeout, maxSize: maxSize}
		now := time.Unix(1700000000, 0)
		for len(stream) > 0 {
			n := min(int(stream[0]), len(stream)-1)
			msg := stream[1 : 1+n]
			stream = stream[1+n:]
			// Each message moves the clock on by a tenth of the timeout,
			// so that partial messages also expire.
			now = now.Add(timeout / 10)
			if len(msg) == 0 || msg[0] != msgFragment {
				continue
			}
			fr, err := decodeFragment(msg[1:])
			if err != nil {
				continue
			}
			out, _ := r.add(fr, now)
			if fr.count > 1 && len(out) > maxSize {
				t.Fatalf("reassembled %d bytes, limit %d", len(out), maxSize)
			}
			for k, p := range r.parts {
				if now.Sub(p.started) > timeout {
					t.Fatalf("partial message %+v kept past the timeout", k)
				}
				if len(p.buf) > maxSize || p.next >= p.count {
					t.Fatalf("partial message %+v in an impossible state: %d bytes, %d of %d", k, len(p.buf), p.next, p.count)
				}
			}
		}
	})
}
