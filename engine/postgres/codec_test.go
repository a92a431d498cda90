package postgres

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	"github.com/heraldhq/herald/engine"
)

func samePub(a, b *engine.Publication) bool {
	return a.Offset == b.Offset && a.Time == b.Time && bytes.Equal(a.Data, b.Data) &&
		sameInfo(a.Info, b.Info) && maps.Equal(a.Tags, b.Tags)
}

func sameInfo(a, b *engine.ClientInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.User == b.User && a.Client == b.Client &&
		bytes.Equal(a.ConnInfo, b.ConnInfo) && bytes.Equal(a.ChanInfo, b.ChanInfo)
}

func TestCodecRoundTrip(t *testing.T) {
	info := &engine.ClientInfo{User: "ü1", Client: "c\x00bad", ConnInfo: []byte{0xff, 0}, ChanInfo: []byte(`{"a":1}`)}
	pubs := []*engine.Publication{
		{Data: []byte(`{"text":"hi"}`), Time: 1700000000123},
		{Data: []byte{0, 1, 2, 0xfe}, Info: info, Tags: map[string]string{"k": "v", "": "", "bin\xff": "x"}, Time: 5},
		{Data: nil, Time: 0},
		{Data: []byte("12:34!56"), Time: -1},
	}
	for _, raw := range []bool{false, true} {
		var buf []byte
		buf = appendHeader(buf, "tok.1")
		for i, p := range pubs {
			buf = appendPub(buf, "chan:"+string(rune('a'+i)), uint64(i+1)*1000, "ep"+string(rune('a'+i)), p, raw)
		}
		buf = appendJoinLeave(buf, kindJoin, "room", info, raw)
		buf = appendJoinLeave(buf, kindLeave, "room\xff", &engine.ClientInfo{}, raw)
		buf = appendControl(buf, []byte("control\x00"), raw)
		buf = appendRef(buf, "", 0, "", 1<<62+5)
		if !raw && (!textSafe(buf) || len(buf) == 0) {
			t.Fatalf("encoded payload is not text-safe: %q", buf)
		}
		d := decoder{s: string(buf)}
		for i, want := range pubs {
			r, err := d.next()
			if err != nil {
				t.Fatalf("raw=%v record %d: %v", raw, i, err)
			}
			w := *want
			w.Offset = uint64(i+1) * 1000
			if r.kind != kindPub || r.channel != "chan:"+string(rune('a'+i)) || r.offset != w.Offset ||
				r.epoch != "ep"+string(rune('a'+i)) || !samePub(&w, r.pub) {
				t.Fatalf("raw=%v record %d: got %+v pub %+v, want %+v", raw, i, r, r.pub, w)
			}
		}
		r, err := d.next()
		if err != nil || r.kind != kindJoin || r.channel != "room" || !sameInfo(r.info, info) {
			t.Fatalf("join: %+v, %v", r, err)
		}
		r, err = d.next()
		if err != nil || r.kind != kindLeave || r.channel != "room\xff" || !sameInfo(r.info, &engine.ClientInfo{}) {
			t.Fatalf("leave: %+v, %v", r, err)
		}
		r, err = d.next()
		if err != nil || r.kind != kindControl || string(r.data) != "control\x00" {
			t.Fatalf("control: %+v, %v", r, err)
		}
		r, err = d.next()
		if err != nil || r.kind != kindRef || r.channel != "" || r.spillID != 1<<62+5 {
			t.Fatalf("ref: %+v, %v", r, err)
		}
		if d.more() {
			t.Fatalf("bytes left after the last record: %q", d.s[d.pos:])
		}
	}
}

func TestCodecRejectsMalformed(t *testing.T) {
	for _, s := range []string{
		"x", "p", "p5:ab", "p3:abc", "p3:abc1:x", "c9999999999999999999999:x", "c3!@@@@", "n", "n2:ab",
		"p1:a1:11:e1:1" + "2:-1", // negative tag count
		"p1:a1:11:e1:11:21:0",    // tag count beyond the fields
	} {
		d := decoder{s: s}
		if _, err := d.next(); err == nil {
			t.Errorf("decoded %q without error", s)
		}
	}
}

func TestTextSafe(t *testing.T) {
	for s, want := range map[string]bool{"": true, "héllo": true, "a\x00b": false, "\xff": false, strings.Repeat("é", 10): true} {
		if textSafe(s) != want {
			t.Errorf("textSafe(%q) = %v", s, !want)
		}
	}
}

// TestCodecExceptClient checks that ExceptClient travels in an 'x' record,
// raw and in base64, also through the spill table, and that a publication
// without it is still the 'p' record older nodes and the SQL functions
// read and write.
func TestCodecExceptClient(t *testing.T) {
	for _, raw := range []bool{false, true} {
		for _, except := range []string{"c2", "bin\x00\xff"} {
			p := &engine.Publication{Data: []byte(`{}`), Tags: map[string]string{"k": "v"}, Time: 7, ExceptClient: except}
			rec := appendPub(nil, "ch", 3, "ep", p, raw)
			if rec[0] != kindExcept {
				t.Fatalf("a publication with ExceptClient is a %q record", rec[0])
			}
			d := decoder{s: string(rec)}
			r, err := d.next()
			if err != nil || r.kind != kindPub || r.pub.ExceptClient != except || r.offset != 3 || d.more() {
				t.Fatalf("raw=%v: decoded %+v, %v; want a publication except %q", raw, r, err, except)
			}
			ref := record{kind: kindRef, channel: "ch", offset: 3, epoch: "ep", spillID: 9}
			if r, err := decodeSpilled(appendPub(nil, "ch", 0, "", p, true), ref); err != nil || r.pub.ExceptClient != except {
				t.Fatalf("spilled: %+v, %v", r, err)
			}
			p.ExceptClient = ""
			if plain := appendPub(nil, "ch", 3, "ep", p, raw); plain[0] != kindPub || !bytes.HasPrefix(rec[1:], plain[1:]) {
				t.Errorf("without ExceptClient %q, with it %q: want the same 'p' fields", plain, rec)
			}
		}
	}
}

// TestCodecMapChange checks that a map change (kind 'k') keeps its key,
// its removal flag and its except-client, and that a bad removal flag is
// refused.
func TestCodecMapChange(t *testing.T) {
	pubs := []*engine.Publication{
		{Key: "k\xff1", Data: []byte(`{"v":1}`), Info: &engine.ClientInfo{User: "u", Client: "c"}, Time: 7},
		{Key: "k2", Removed: true, ExceptClient: "c2"},
	}
	for _, raw := range []bool{false, true} {
		var buf []byte
		buf = appendHeader(buf, "t")
		for i, p := range pubs {
			buf = appendPub(buf, "m", uint64(i+1), "e", p, raw)
		}
		d := decoder{s: string(buf)}
		for i, want := range pubs {
			r, err := d.next()
			if err != nil {
				t.Fatalf("raw=%v change %d: %v", raw, i, err)
			}
			got := r.pub
			if r.kind != kindPub || got.Key != want.Key || got.Removed != want.Removed || got.ExceptClient != want.ExceptClient || !bytes.Equal(got.Data, want.Data) || !sameInfo(got.Info, want.Info) {
				t.Fatalf("raw=%v change %d: %+v, want %+v", raw, i, got, want)
			}
		}
	}
	bad := string(appendPub(nil, "m", 1, "e", &engine.Publication{Key: "k"}, true))
	bad = strings.TrimSuffix(bad, "1:0") + "1:x"
	if _, err := (&decoder{s: bad}).next(); err == nil {
		t.Fatal("a map change with removal flag x was decoded")
	}
}

// TestCodecDelta checks that Publication.Delta travels as a deltaMark
// header record before the publication's own record, for every kind of
// publication record, raw and in base64, through the spill table too; that
// it marks only the next record; and that without the mark the record is
// byte for byte what it was, so an older node, which skips every header
// record, reads the marked publication in full.
func TestCodecDelta(t *testing.T) {
	for _, raw := range []bool{false, true} {
		for _, p := range []*engine.Publication{
			{Data: []byte(`{"a":1}`), Time: 7},
			{Data: []byte(`{}`), ExceptClient: "c\xff2", Time: 8},
			{Key: "k", Data: []byte(`{"v":1}`), Tags: map[string]string{"t": "1"}, Time: 9},
		} {
			plain := appendPub(nil, "ch", 3, "ep", p, raw)
			p.Delta = true
			marked := appendPub(nil, "ch", 3, "ep", p, raw)
			mark := appendHeader(nil, deltaMark)
			if !bytes.Equal(marked, append(mark, plain...)) {
				t.Fatalf("raw=%v: marked record %q, want the mark %q before %q", raw, marked, mark, plain)
			}
			buf := append(appendHeader(nil, "tok.1"), marked...)
			p.Delta = false
			buf = appendPub(buf, "ch", 4, "ep", p, raw)
			d := decoder{s: string(buf)}
			r, err := d.next()
			if err != nil || r.kind != kindPub || !r.pub.Delta || r.offset != 3 {
				t.Fatalf("raw=%v: marked record decoded as %+v, %v", raw, r, err)
			}
			if r, err := d.next(); err != nil || r.pub.Delta || r.offset != 4 || d.more() {
				t.Fatalf("raw=%v: the record after a marked one decoded as %+v, %v", raw, r, err)
			}
			p.Delta = true
			ref := record{kind: kindRef, channel: "ch", offset: 3, epoch: "ep", spillID: 9}
			if r, err := decodeSpilled(appendPub(nil, "ch", 0, "", p, true), ref); err != nil || !r.pub.Delta {
				t.Fatalf("spilled: %+v, %v", r, err)
			}
		}
	}
}
