package hub

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/heraldhq/herald/protocol"
)

// TestCompactionSharesEncodings: however many subscribers a delivery
// reaches, with and without compaction, it is encoded at most twice per
// protocol, and every subscriber of a kind gets the same bytes.
func TestCompactionSharesEncodings(t *testing.T) {
	for _, mk := range []func() *protocol.Push{
		func() *protocol.Push {
			return &protocol.Push{Channel: "cc:room", Pub: &protocol.Publication{Data: []byte(`{"a":1}`), Offset: 7}}
		},
		func() *protocol.Push {
			return &protocol.Push{Channel: "cc:room", Join: &protocol.Join{Info: &protocol.ClientInfo{User: "u", Client: "c"}}}
		},
	} {
		d := &delivery{push: mk()}
		byName := &subscription{channel: "cc:room"}
		byID := &subscription{channel: "cc:room", compact: true, compactID: 5}
		for _, typ := range []protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf} {
			named := d.pushFor(byName).encoded(typ)
			compacted := d.pushFor(byID).encoded(typ)
			for range 100 {
				if got := d.pushFor(byName).encoded(typ); &got[0] != &named[0] {
					t.Fatalf("%v: a subscriber by name got a new encoding", typ)
				}
				if got := d.pushFor(&subscription{channel: "cc:room", compactID: 5}).encoded(typ); &got[0] != &compacted[0] {
					t.Fatalf("%v: a compacted subscriber got a new encoding", typ)
				}
			}
			var back protocol.Reply
			if typ == protocol.TypeProtobuf {
				if err := back.UnmarshalVT(compacted); err != nil {
					t.Fatal(err)
				}
				if back.Push.Id != 5 || back.Push.Channel != "" {
					t.Fatalf("compacted push %v", back.Push)
				}
			} else if s := string(compacted); !strings.Contains(s, `"id":5`) || strings.Contains(s, "cc:room") {
				t.Fatalf("compacted push %s", s)
			}
		}
		if d.pushFor(byName) != d || d.compacted == nil || d.compacted.compacted != nil {
			t.Fatal("more than one twin")
		}
	}
}

// TestCompactionSharesDelta: delta subscribers with and without
// compaction get the same patch, computed once, each in its own push.
func TestCompactionSharesDelta(t *testing.T) {
	base := []byte(`{"seq":1,"text":"a long enough document that changes one field at a time"}`)
	data := []byte(`{"seq":2,"text":"a long enough document that changes one field at a time"}`)
	d := &delivery{
		push:  &protocol.Push{Channel: "cc:doc", Pub: &protocol.Publication{Data: data, Offset: 2}},
		delta: &deltaStep{base: deltaRef{epoch: "e", offset: 1}, baseData: base, ref: deltaRef{epoch: "e", offset: 2}},
	}
	byID := &subscription{channel: "cc:doc", delta: true, compactID: 9}
	for _, typ := range []protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf} {
		_, named := d.deltaMsgs(typ)
		_, compacted := d.pushFor(byID).deltaMsgs(typ)
		if named == nil || compacted == nil || len(compacted) >= len(named) {
			t.Fatalf("%v: delta pushes of %d bytes by name, %d by id", typ, len(named), len(compacted))
		}
	}
	if d.compacted.dx.patchDone || &d.pushFor(byID).patch()[0] != &d.patch()[0] {
		t.Fatal("the twin made a patch of its own")
	}
}

// compactionWireCases are the publications docs/benchmarks.md measures.
var compactionWireCases = []struct {
	what string
	push *protocol.Push
}{
	{"`chat:room-42`, 16 bytes of data from the server API, offset 1,234", &protocol.Push{
		Channel: "chat:room-42",
		Pub:     &protocol.Publication{Data: []byte(`{"text":"hello"}`), Offset: 1234},
	}},
	{"`prices:eu:instrument-EURUSD-spot`, 28 bytes of data, no offset", &protocol.Push{
		Channel: "prices:eu:instrument-EURUSD-spot",
		Pub:     &protocol.Publication{Data: []byte(`{"bid":1.08421,"ask":1.0843}`)},
	}},
	{"`chat:room-42`, a client's publication (user id and connection id in `info`), offset 1,234", &protocol.Push{
		Channel: "chat:room-42",
		Pub: &protocol.Publication{Data: []byte(`{"text":"hello"}`), Offset: 1234,
			Info: &protocol.ClientInfo{User: "user-1001", Client: "3f2b8c1e-6d4a-4c1b-9a7e-2b5f0c9d8e71"}},
	}},
	{"`chat:room-42`, a join event (user id and connection id)", &protocol.Push{
		Channel: "chat:room-42",
		Join:    &protocol.Join{Info: &protocol.ClientInfo{User: "user-1001", Client: "3f2b8c1e-6d4a-4c1b-9a7e-2b5f0c9d8e71"}},
	}},
}

// compactionWireID is the channel id of the measurement: the 12,345th
// channel a node gave an id, 2 varint bytes and 5 digits.
const compactionWireID = 12345

// compactionWireTable is docs/benchmarks.md's table of bytes per push
// with and without compaction, measured by encoding each case as the hub
// does (delivery.encoded). Frames add a newline (JSON) or a varint length
// (Protobuf) to each, the same either way.
func compactionWireTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| push | JSON by name | JSON by id | Protobuf by name | Protobuf by id |\n|---|---|---|---|---|\n")
	for _, c := range compactionWireCases {
		d := &delivery{push: c.push}
		s := &subscription{channel: c.push.Channel, compactID: compactionWireID}
		row := "| " + c.what
		for _, typ := range []protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf} {
			named, compacted := len(d.encoded(typ)), len(d.pushFor(s).encoded(typ))
			if compacted >= named {
				t.Errorf("%s, %v: %d bytes by id, %d by name", c.what, typ, compacted, named)
			}
			row += fmt.Sprintf(" | %d | %d (−%d%%)", named, compacted, (named-compacted)*100/named)
		}
		b.WriteString(row + " |\n")
	}
	return b.String()
}

// TestCompactionWireBytes: docs/benchmarks.md quotes the bytes per push
// this measures. Run with -v to print the table.
func TestCompactionWireBytes(t *testing.T) {
	table := compactionWireTable(t)
	t.Log("\n" + table)
	doc, err := os.ReadFile("../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), table) {
		t.Fatalf("docs/benchmarks.md does not have the measured table of channel compaction:\n%s", table)
	}
}
