package hub

import (
	"bytes"
	"testing"

	"github.com/heraldhq/herald/protocol"
)

// TestAdmittedJSONReplyEncodedOnce: a JSON history reply of 100
// publications of 60 KB, encoded with its admission's estimate, takes one
// allocation that holds it, not a buffer doubled from empty (about 20
// allocations whose copies are garbage as large as the reply: the node's
// peak RSS in bench/attacks.sh noread).
func TestAdmittedJSONReplyEncodedOnce(t *testing.T) {
	data := []byte(`{"pad":"` + string(bytes.Repeat([]byte("x"), 60000)) + `"}`)
	res := &protocol.HistoryResult{Epoch: "e", Offset: 100}
	for i := range 100 {
		res.Publications = append(res.Publications, &protocol.Publication{Data: data, Offset: uint64(i + 1), Tags: map[string]string{"k": "v"}})
	}
	r := &protocol.Reply{Id: 1, History: res}
	size := publicationsSize(res.Publications)
	var msg []byte
	allocs := testing.AllocsPerRun(5, func() {
		var err error
		if msg, err = encodeReplySized(protocol.TypeJSON, r, size); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("encoding took %v allocations, want 1", allocs)
	}
	if len(msg) > size {
		t.Errorf("the reply is %d bytes, over its admitted estimate %d", len(msg), size)
	}
	if waste := cap(msg) - len(msg); waste > 100*publicationOverhead {
		t.Errorf("%d bytes of the buffer unused, over the estimate's overhead", waste)
	}
}
