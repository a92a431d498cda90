package wire_test

import (
	"encoding/hex"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/internal/wire"
)

// checkSame fails unless got decodes to what want was: the networked
// engines deliver nil and empty byte slices and maps alike.
func checkSame(t testing.TB, want, got *engine.Publication) {
	t.Helper()
	if diff := enginetest.PublicationDiff(want, got); diff != "" {
		t.Fatalf("decoded publication: %s", diff)
	}
	if got.Time != want.Time || got.Offset != 0 {
		t.Fatalf("decoded time %d offset %d, want time %d offset 0", got.Time, got.Offset, want.Time)
	}
}

func TestPublicationRoundTrip(t *testing.T) {
	withOffset := enginetest.SamplePublication()
	withOffset.Offset = 7 // not encoded
	for _, want := range []*engine.Publication{enginetest.SamplePublication(), withOffset, {Data: []byte("x")}, {}, {Time: -1}, {Data: []byte("x"), Delta: true}, {Key: "k", Removed: true, Delta: true}} {
		got, err := wire.DecodePublication(wire.AppendPublication(nil, want))
		if err != nil {
			t.Fatalf("decode %+v: %v", want, err)
		}
		want.Offset = 0
		checkSame(t, want, got)
	}
}

// TestGolden pins the bytes: Redis keeps encoded publications and client
// infos for as long as history and presence last, and nodes of different
// releases talk to each other during a rolling upgrade.
func TestGolden(t *testing.T) {
	info := &engine.ClientInfo{User: "u1", Client: "c1", ConnInfo: []byte(`{}`), ChanInfo: []byte{0, 1}}
	pub := &engine.Publication{Data: []byte(`{"a":1}`), Info: info, Tags: map[string]string{"k": "v"}, Time: 1700000000123}
	for name, c := range map[string]struct {
		got  []byte
		want string
	}{
		"publication": {wire.AppendPublication(nil, pub), "0a077b2261223a317d12100a027531120263311a027b7d220200011a060a016b12017620fbd095ffbc31"},
		"empty":       {wire.AppendPublication(nil, &engine.Publication{}), "0a002000"},
		// Delta is field 8, after the fields older releases write, which
		// skip it as an unknown field.
		"delta":       {wire.AppendPublication(nil, &engine.Publication{Data: []byte("x"), Delta: true}), "0a017820004001"},
		"client info": {wire.AppendClientInfo(nil, info), "0a027531120263311a027b7d22020001"},
	} {
		if got := hex.EncodeToString(c.got); got != c.want {
			t.Errorf("%s encodes as %s, want %s", name, got, c.want)
		}
	}
}

func TestAppendKeepsPrefix(t *testing.T) {
	b := wire.AppendPublication([]byte("p"), enginetest.SamplePublication())
	got, err := wire.DecodePublication(b[1:])
	if b[0] != 'p' || err != nil {
		t.Fatalf("prefix %q, decode error %v", b[0], err)
	}
	checkSame(t, enginetest.SamplePublication(), got)
}

func TestClientInfo(t *testing.T) {
	want := enginetest.SamplePublication().Info
	enc := wire.AppendClientInfo(nil, want)
	got, err := wire.DecodeClientInfo(enc)
	if err != nil || got.User != want.User || got.Client != want.Client ||
		string(got.ConnInfo) != string(want.ConnInfo) || string(got.ChanInfo) != string(want.ChanInfo) {
		t.Fatalf("round trip gave %+v, %v", got, err)
	}
	if u, err := wire.DecodeUser(enc); err != nil || u != want.User {
		t.Errorf("DecodeUser = %q, %v", u, err)
	}
	if u, err := wire.DecodeUser(nil); err != nil || u != "" {
		t.Errorf("DecodeUser(nil) = %q, %v", u, err)
	}
}

// TestUnknownFieldsSkipped checks that a reader skips fields a later
// release may add, of any wire type.
func TestUnknownFieldsSkipped(t *testing.T) {
	b := wire.AppendPublication(nil, enginetest.SamplePublication())
	b = protowire.AppendTag(b, 9, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 42)
	b = protowire.AppendTag(b, 10, protowire.BytesType)
	b = protowire.AppendString(b, "future")
	got, err := wire.DecodePublication(b)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, enginetest.SamplePublication(), got)
}

func TestMalformed(t *testing.T) {
	body := wire.AppendPublication(nil, enginetest.SamplePublication())
	for name, b := range map[string][]byte{
		"bad tag":        {0xff},
		"truncated":      body[:len(body)-3],
		"bad info":       protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), []byte{0x0a, 0x05}),
		"bad tag record": protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), []byte{0x0a}),
	} {
		if _, err := wire.DecodePublication(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := wire.DecodeClientInfo([]byte{0x0a, 0x05, 'x'}); err == nil {
		t.Error("truncated client info decoded")
	}
	if _, err := wire.DecodeUser([]byte{0x12, 0x05, 'x'}); err == nil {
		t.Error("truncated client info gave a user")
	}
}

func TestEachField(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "x")
	b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 1)
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, 300)
	var got []wire.Field
	if err := wire.EachField(b, func(f wire.Field) error { got = append(got, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Num != 1 || string(got[0].Bytes) != "x" || got[1].Num != 0 || got[2].Num != 3 || got[2].Varint != 300 {
		t.Errorf("fields %+v", got)
	}
	stop := errors.New("stop")
	calls := 0
	if err := wire.EachField(b, func(wire.Field) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("EachField returned %v after %d calls, want the callback's error after 1", err, calls)
	}
	if err := wire.EachField(b[:len(b)-1], func(wire.Field) error { return nil }); err == nil {
		t.Error("truncated message walked without error")
	}
}

func TestBuffers(t *testing.T) {
	var p wire.Buffers
	b := p.Get()
	if len(*b) != 0 {
		t.Fatalf("new buffer has %d bytes", len(*b))
	}
	*b = append(*b, "used"...)
	p.Put(b)
	if b := p.Get(); len(*b) != 0 {
		t.Errorf("pooled buffer came back with %q", *b)
	}
	huge := make([]byte, 0, 1<<20)
	p.Put(&huge) // dropped, not kept by the pool
}

// TestExceptClient checks that ExceptClient travels, and that a
// publication without it encodes as before the field existed (TestGolden's
// bytes), so that older nodes read both.
func TestExceptClient(t *testing.T) {
	want := &engine.Publication{Data: []byte(`{}`), Time: 5, ExceptClient: "client-1"}
	enc := wire.AppendPublication(nil, want)
	got, err := wire.DecodePublication(enc)
	if err != nil || got.ExceptClient != "client-1" {
		t.Fatalf("decoded %+v, %v; want ExceptClient client-1", got, err)
	}
	want.ExceptClient = ""
	without := wire.AppendPublication(nil, want)
	if len(enc) != len(without)+2+len("client-1") || string(enc[:len(without)]) != string(without) {
		t.Errorf("ExceptClient encodes as %x, want %x followed by field 5", enc, without)
	}
}

func TestMapChange(t *testing.T) {
	for _, want := range []*engine.Publication{
		{Data: []byte(`{"v":1}`), Time: 5, Key: "k1"},
		{Time: 6, Key: "k2", Removed: true},
	} {
		enc := wire.AppendPublication(nil, want)
		got, err := wire.DecodePublication(enc)
		if err != nil || got.Key != want.Key || got.Removed != want.Removed || string(got.Data) != string(want.Data) {
			t.Fatalf("decoded %+v, %v; want %+v", got, err, want)
		}
		plain := *want
		plain.Key, plain.Removed = "", false
		if without := wire.AppendPublication(nil, &plain); string(enc[:len(without)]) != string(without) {
			t.Errorf("a map change does not start with the plain encoding: %x, %x", enc, without)
		}
	}
}
