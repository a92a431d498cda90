package loadgen

import (
	"testing"

	"github.com/heraldhq/herald/protocol"
)

// pushFrame is a publication push as Herald sends it, with a bench payload.
func pushFrame(tb testing.TB, format protocol.Type) []byte {
	tb.Helper()
	data := AppendPayload(nil, Message{Step: 3, N: 1000, Seq: 17, Intended: 1764370000123456789}, 128)
	r := &protocol.Reply{Push: &protocol.Push{Channel: "bench", Pub: &protocol.Publication{Data: data, Offset: 42}}}
	msg, err := protocol.AppendReply(format, nil, r)
	if err != nil {
		tb.Fatal(err)
	}
	return protocol.AppendMessage(format, nil, msg)
}

// BenchmarkHeavyDecode is the heavy client's decoding of one publication
// push and its data: what it costs per copy beside reading the frame.
func BenchmarkHeavyDecode(b *testing.B) {
	for _, format := range []protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf} {
		b.Run(format.String(), func(b *testing.B) {
			frame := pushFrame(b, format)
			c := &heavyConn{pool: &Pool{cfg: PoolConfig{Format: format}}, pong: true}
			c.pool.batchHandler = tallyHandler{tally: NewTally(1, 1)}
			b.ReportAllocs()
			for b.Loop() {
				c.batch = c.batch[:0]
				if err := c.decodeFrame(frame, c.handle); err != nil || len(c.batch) != 1 {
					b.Fatal(err, len(c.batch))
				}
			}
		})
	}
}
