package writequeue

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/protocol"
)

type sub struct{ name string }

func item(msg string, droppable bool, s *sub, delta bool) Item[*sub] {
	return Item[*sub]{Msg: []byte(msg), Droppable: droppable, Sub: s, Delta: delta}
}

func msgs(q []Item[*sub]) string {
	var b strings.Builder
	for _, m := range q {
		b.Write(m.Msg)
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

func size(q []Item[*sub]) int {
	n := 0
	for _, m := range q {
		n += len(m.Msg)
	}
	return n
}

func TestDropOldest(t *testing.T) {
	t.Parallel()
	q := []Item[*sub]{item("r1", false, nil, false), item("d1", true, nil, false), item("d2", true, nil, false), item("r2", false, nil, false), item("d3", true, nil, false)}
	kept, n, dropped, broken, droppable := DropOldest(q, size(q), 6)
	if msgs(kept) != "r1 r2 d3" || n != 6 || dropped != 2 || broken != nil || !droppable {
		t.Fatalf("kept %q size %d dropped %d broken %v droppable %v", msgs(kept), n, dropped, broken, droppable)
	}
	if n != size(kept) {
		t.Fatalf("size %d, kept %d bytes", n, size(kept))
	}
}

// TestDropOldestDeltaChains: the deltas after a dropped publication of
// their subscription go too, up to its next full publication; a chain
// still broken at the end is reported.
func TestDropOldestDeltaChains(t *testing.T) {
	t.Parallel()
	a, b := &sub{"a"}, &sub{"b"}
	q := []Item[*sub]{
		item("a1", true, a, false), item("b1", true, b, false), // over the limit: both dropped
		item("a2", false, a, true), item("b2", false, b, true), // deltas on them: dropped
		item("a3", false, a, false), item("a4", false, a, true), // a full one heals a's chain
		item("b3", false, b, true),
	}
	kept, n, dropped, broken, droppable := DropOldest(q, size(q), 10)
	if msgs(kept) != "a3 a4" || n != 4 || dropped != 5 || droppable {
		t.Fatalf("kept %q size %d dropped %d droppable %v", msgs(kept), n, dropped, droppable)
	}
	if len(broken) != 1 || !broken[b] {
		t.Fatalf("broken %v, want b only", broken)
	}
}

func TestArrays(t *testing.T) {
	t.Parallel()
	var a Arrays[*sub]
	q := a.New()
	if len(q) != 0 || cap(q) != ArrayLen {
		t.Fatalf("new queue len %d cap %d", len(q), cap(q))
	}
	q = append(q, item("x", false, &sub{}, false))
	a.Recycle(q)
	a.Recycle(make([]Item[*sub], 1, ArrayLen+1)) // not one of New's: ignored
	if q2 := a.New(); cap(q2) == ArrayLen && q2[:1][0].Sub != nil {
		t.Fatal("a recycled array kept its messages")
	}
}

func TestFrames(t *testing.T) {
	t.Parallel()
	var q []Item[*sub]
	for range MaxFrameMessages + 1 {
		q = append(q, item(`{}`, false, nil, false))
	}
	big := bytes.Repeat([]byte("x"), MaxFrameBytes)
	q = append(q, Item[*sub]{Msg: big})
	f := NewFramer()
	defer f.Release()
	var frames [][]byte
	err := Frames(&f, protocol.TypeJSON, q, func(b []byte) error {
		frames = append(frames, bytes.Clone(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// 128 messages, then one (the next would pass the message bound), then
	// the large one alone.
	if len(frames) != 3 || bytes.Count(frames[0], []byte("{}")) != MaxFrameMessages || string(frames[1]) != "{}" || len(frames[2]) != MaxFrameBytes {
		t.Fatalf("%d frames", len(frames))
	}
	// A JSON message over the frame bound is written as it is, not copied.
	huge := Item[*sub]{Msg: bytes.Repeat([]byte("y"), MaxFrameBytes+1)}
	var got [][]byte
	if err := Frames(&f, protocol.TypeJSON, []Item[*sub]{item(`{}`, false, nil, false), huge}, func(b []byte) error {
		got = append(got, b[:len(b):len(b)])
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0]) != "{}" || &got[1][0] != &huge.Msg[0] {
		t.Fatalf("%d frames; a message over the frame bound must be its own frame, uncopied", len(got))
	}
	failed := errors.New("write failed")
	calls := 0
	if err := Frames(&f, protocol.TypeJSON, q, func([]byte) error { calls++; return failed }); !errors.Is(err, failed) || calls != 1 {
		t.Fatalf("error %v after %d writes, want the first write's", err, calls)
	}
}

// TestArraysRecycleClearsDropped: Recycle clears only the queue's own
// items, which leaves the array zero only if nothing past the queue's
// length holds a message: a queue that DropOldest shortened must come back
// with nothing of what it dropped.
func TestArraysRecycleClearsDropped(t *testing.T) {
	t.Parallel()
	var a Arrays[*sub]
	q := a.New()
	for i := range ArrayLen {
		q = append(q, item(strings.Repeat("x", i+1), true, &sub{}, false))
	}
	arr := (*[ArrayLen]Item[*sub])(q[:ArrayLen])
	q, _, _, _, _ = DropOldest(q, size(q), 10)
	if len(q) == ArrayLen {
		t.Fatal("DropOldest dropped nothing; the test needs a shortened queue")
	}
	a.Recycle(q)
	for i, it := range arr {
		if it.Msg != nil || it.Sub != nil || it.Droppable {
			t.Fatalf("item %d of the recycled array holds %q", i, it.Msg)
		}
	}
}

// TestFramesSingleMessage: a JSON message alone in its frame (the one
// message of a queue, or the last one after a full frame) is written as
// the message itself, with its capacity cut so that an append by the
// writer copies rather than writing into the array other clients' queues
// share, and a queue of one borrows no buffer; protobuf still frames it
// with its length.
func TestFramesSingleMessage(t *testing.T) {
	t.Parallel()
	shared := make([]byte, 2, 64)
	copy(shared, "{}")
	f := NewFramer()
	defer f.Release()
	var got []byte
	if err := Frames(&f, protocol.TypeJSON, []Item[*sub]{{Msg: shared}}, func(b []byte) error {
		got = b
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if &got[0] != &shared[0] || cap(got) != len(shared) {
		t.Fatalf("frame %q (cap %d): want the message itself, capacity %d", got, cap(got), len(shared))
	}
	if f.bp != nil {
		t.Fatal("a single JSON message borrowed a frame buffer")
	}
	// The same for the last message of a longer queue when it starts a
	// frame of its own: after a full frame, it is alone in the next.
	var q []Item[*sub]
	for range MaxFrameMessages {
		q = append(q, item(`{}`, false, nil, false))
	}
	q = append(q, Item[*sub]{Msg: shared})
	var frames [][]byte
	if err := Frames(&f, protocol.TypeJSON, q, func(b []byte) error {
		frames = append(frames, b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(frames) != 2 || &frames[1][0] != &shared[0] || cap(frames[1]) != len(shared) {
		t.Fatalf("%d frames; the last message, alone in its frame, must be written as it is", len(frames))
	}
	if err := Frames(&f, protocol.TypeProtobuf, []Item[*sub]{{Msg: shared}}, func(b []byte) error {
		got = bytes.Clone(b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := protocol.AppendMessage(protocol.TypeProtobuf, nil, shared); !bytes.Equal(got, want) {
		t.Fatalf("protobuf frame %x, want %x", got, want)
	}
}
