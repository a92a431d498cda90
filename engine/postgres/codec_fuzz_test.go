package postgres

import (
	"bytes"
	"testing"

	"github.com/heraldhq/herald/engine"
)

// FuzzDecoder reads arbitrary notification payloads. The decoder must
// never panic, and every record it decodes must encode again, in the
// text-safe form and in the raw form of the spill table, to a record that
// decodes to the same thing.
func FuzzDecoder(f *testing.F) {
	info := &engine.ClientInfo{User: "u", Client: "c\x00", ConnInfo: []byte(`{"a":1}`), ChanInfo: []byte{0xff}}
	f.Add(string(appendPub(nil, "ch", 3, "e", &engine.Publication{Data: []byte("x"), Tags: map[string]string{"a": "b"}}, false)))
	f.Add(string(appendPub(appendHeader(nil, "t"), "ch", 1<<63, "e", &engine.Publication{Data: []byte{0, 0xfe}, Info: info, Time: -1, ExceptClient: "c2"}, false)))
	f.Add(string(appendPub(nil, "ch\xff", 0, "", &engine.Publication{Info: info}, true)))
	f.Add(string(appendControl(appendHeader(nil, "t"), []byte{0xff}, false)))
	f.Add(string(appendJoinLeave(appendJoinLeave(nil, kindJoin, "room", info, false), kindLeave, "room", &engine.ClientInfo{}, false)))
	f.Add(string(appendRef(appendHeader(nil, "tok.1"), "ch", 7, "ep", 1<<62+5)))
	f.Add("p1:a1:11:e1:10:0:1:0")
	f.Add("p1:a1:11:e1:1" + "2:-1")
	f.Fuzz(func(t *testing.T, s string) {
		d := decoder{s: s}
		for range 100 {
			if !d.more() {
				return
			}
			r, err := d.next()
			if err != nil {
				return
			}
			for _, raw := range []bool{false, true} {
				enc := encodeRecord(r, raw)
				if !raw && !textSafe(enc) {
					t.Fatalf("record %+v encodes to a payload that is not text-safe: %q", r, enc)
				}
				d2 := decoder{s: string(enc)}
				again, err := d2.next()
				if err != nil || d2.more() {
					t.Fatalf("raw=%v: record %+v re-encoded as %q: %v (%d bytes left)", raw, r, enc, err, len(d2.s)-d2.pos)
				}
				checkSameRecord(t, r, again)
				if r.kind == kindPub && raw {
					ref := record{kind: kindRef, channel: r.channel, offset: r.offset, epoch: r.epoch, spillID: 1}
					spilled, err := decodeSpilled(enc, ref)
					if err != nil {
						t.Fatalf("spilled record %q: %v", enc, err)
					}
					checkSameRecord(t, r, spilled)
				}
			}
		}
	})
}

// encodeRecord writes r as the engine writes a record of its kind.
func encodeRecord(r record, raw bool) []byte {
	switch r.kind {
	case kindPub:
		return appendPub(nil, r.channel, r.offset, r.epoch, r.pub, raw)
	case kindJoin, kindLeave:
		return appendJoinLeave(nil, r.kind, r.channel, r.info, raw)
	case kindControl:
		return appendControl(nil, r.data, raw)
	case kindRef:
		return appendRef(nil, r.channel, r.offset, r.epoch, r.spillID)
	}
	panic("unexpected record kind " + string(r.kind))
}

func checkSameRecord(t *testing.T, a, b record) {
	t.Helper()
	same := a.kind == b.kind && a.channel == b.channel && a.offset == b.offset && a.epoch == b.epoch &&
		a.spillID == b.spillID && bytes.Equal(a.data, b.data) && sameInfo(a.info, b.info) &&
		(a.pub == nil) == (b.pub == nil)
	if same && a.pub != nil {
		same = samePub(a.pub, b.pub) && a.pub.ExceptClient == b.pub.ExceptClient
	}
	if !same {
		t.Fatalf("record changed on a round trip:\n%+v (pub %+v)\n%+v (pub %+v)", a, a.pub, b, b.pub)
	}
}
