package hub

import (
	"bytes"
	"testing"

	"github.com/heraldhq/herald/engine"
)

// TestJSONChecksOncePerPublication: a large publication read by many JSON
// clients is checked once, valid or not; small ones, ones without an
// offset and another epoch's are not taken for it. Before, each client's
// history, recovery or map page checked all of every publication again
// (88% of the node's CPU in bench/attacks.sh noread).
func TestJSONChecksOncePerPublication(t *testing.T) {
	j := newJSONChecks()
	calls := 0
	valid := j.valid
	j.valid = func(b []byte) bool { calls++; return valid(b) }

	big := []byte(`{"pad":"` + string(bytes.Repeat([]byte("x"), 2000)) + `"}`)
	binary := append([]byte{0xff, 0xfe}, bytes.Repeat([]byte{0}, 2000)...)
	good := &engine.Publication{Offset: 7, Data: big}
	bad := &engine.Publication{Offset: 8, Data: binary}
	for range 100 { // 100 clients read the same two publications
		if !j.deliverable("ch", "e1", good) {
			t.Fatal("valid JSON data judged not deliverable")
		}
		if j.deliverable("ch", "e1", bad) {
			t.Fatal("binary data judged deliverable to JSON")
		}
	}
	if calls != 2 {
		t.Fatalf("two publications read 100 times each were checked %d times, want 2", calls)
	}
	// The same offset in another epoch or channel is another publication.
	if j.deliverable("ch", "e2", &engine.Publication{Offset: 7, Data: binary}) {
		t.Fatal("another epoch's publication at the same offset took the first one's answer")
	}
	if j.deliverable("other", "e1", &engine.Publication{Offset: 7, Data: binary}) {
		t.Fatal("another channel's publication at the same offset took the first one's answer")
	}
	// Without an offset (no history) nothing fixes the publication.
	if j.deliverable("ch", "e1", &engine.Publication{Data: binary}) {
		t.Fatal("binary data without an offset judged deliverable")
	}
	if n := len(j.m); n != 4 {
		t.Fatalf("%d answers kept, want 4", n)
	}
	// Bounded: past jsonCheckCacheMax the answers are gathered again.
	for i := range jsonCheckCacheMax + 10 {
		j.deliverable("bound", "e", &engine.Publication{Offset: uint64(i + 1), Data: big})
	}
	if n := len(j.m); n > jsonCheckCacheMax {
		t.Fatalf("%d answers kept, over the bound %d", n, jsonCheckCacheMax)
	}
}
