package websocket

import (
	"testing"
	"unsafe"
)

// TestConnSize: a Conn is held by every connection, idle ones included
// (docs/benchmarks.md, "Idle connections"), and the allocator rounds it up
// to its size class: 128 bytes is one, 144 the next. A field added in the
// wrong place (fd after rc took it to 136) costs 16 bytes a connection.
func TestConnSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the sizes are a 64-bit platform's")
	}
	if got := unsafe.Sizeof(Conn{}); got > 128 {
		t.Fatalf("websocket.Conn is %d bytes, over the 128-byte size class", got)
	}
}
