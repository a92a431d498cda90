package redis

import (
	"testing"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/internal/wire"
)

func TestParseMessage(t *testing.T) {
	body := wire.AppendPublication(nil, enginetest.SamplePublication())
	m, err := parseMessage("h42:epochX:" + string(body))
	if err != nil {
		t.Fatal(err)
	}
	if m.kind != msgHistoryPub || m.offset != 42 || m.epoch != "epochX" || m.pub.Offset != 42 || m.pub.Time != enginetest.SamplePublication().Time {
		t.Errorf("parsed %+v", m)
	}
	if diff := enginetest.PublicationDiff(enginetest.SamplePublication(), m.pub); diff != "" {
		t.Errorf("history publication: %s", diff)
	}
	m, err = parseMessage("p" + string(body))
	if err != nil || m.kind != msgPub || m.pub.Offset != 0 || enginetest.PublicationDiff(enginetest.SamplePublication(), m.pub) != "" {
		t.Errorf("publication parsed as %+v, %v", m, err)
	}
	info := &engine.ClientInfo{User: "u", Client: "c"}
	m, err = parseMessage(string(wire.AppendClientInfo([]byte{msgLeave}, info)))
	if err != nil || m.kind != msgLeave || m.info.User != "u" || m.info.Client != "c" {
		t.Errorf("leave parsed as %+v, %v", m, err)
	}
	for _, bad := range []string{"", "x", "h", "h12", "h0:e:", "habc:e:", "h1::", "p\xff", "j\xff"} {
		if _, err := parseMessage(bad); err == nil {
			t.Errorf("parseMessage(%q) succeeded", bad)
		}
	}
}

// FuzzParseMessage checks the framing: parsing never panics, and a
// history publication carries the offset of its header. The bodies'
// round trip is fuzzed in package wire.
func FuzzParseMessage(f *testing.F) {
	f.Add("h1:e:" + string(wire.AppendPublication(nil, enginetest.SamplePublication())))
	f.Add("p" + string(wire.AppendPublication(nil, enginetest.SamplePublication())))
	f.Add("j" + string(wire.AppendClientInfo(nil, &engine.ClientInfo{User: "u"})))
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseMessage(s)
		if err != nil {
			return
		}
		switch m.kind {
		case msgHistoryPub:
			if m.offset == 0 || m.epoch == "" || m.pub.Offset != m.offset {
				t.Fatalf("history message %q parsed as offset %d epoch %q, publication offset %d", s, m.offset, m.epoch, m.pub.Offset)
			}
		case msgPub:
			if m.pub == nil || m.pub.Offset != 0 {
				t.Fatalf("publication %q parsed as %+v", s, m.pub)
			}
		case msgJoin, msgLeave:
			if m.info == nil {
				t.Fatalf("join/leave %q parsed without client info", s)
			}
		default:
			t.Fatalf("%q parsed as kind %q", s, m.kind)
		}
	})
}

func TestStreamID(t *testing.T) {
	for _, off := range []uint64{1, 9, 1 << 40} {
		got, err := parseStreamID(streamID(off))
		if err != nil || got != off {
			t.Errorf("parseStreamID(streamID(%d)) = %d, %v", off, got, err)
		}
	}
	for _, bad := range []string{"", "5", "5-1", "0-0", "x-0"} {
		if _, err := parseStreamID(bad); err == nil {
			t.Errorf("parseStreamID(%q) succeeded", bad)
		}
	}
}

func TestClientIDs(t *testing.T) {
	list := "id=3 addr=127.0.0.1:1 name=herald:a cmd=subscribe\nid=4 addr=127.0.0.1:2 name=herald:b cmd=subscribe\nid=5 name= cmd=x\n"
	if got := clientIDs(list, "herald:a"); len(got) != 1 || got[0] != "3" {
		t.Errorf("clientIDs = %v", got)
	}
}
