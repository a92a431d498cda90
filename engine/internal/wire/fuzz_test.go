package wire_test

import (
	"bytes"
	"testing"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/internal/wire"
)

// FuzzDecodePublication checks that decoding never panics and that
// whatever decodes encodes and decodes to the same publication.
func FuzzDecodePublication(f *testing.F) {
	f.Add(wire.AppendPublication(nil, enginetest.SamplePublication()))
	f.Add(wire.AppendPublication(nil, &engine.Publication{}))
	f.Add([]byte{0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		pub, err := wire.DecodePublication(b)
		if err != nil {
			return
		}
		again, err := wire.DecodePublication(wire.AppendPublication(nil, pub))
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", pub, err)
		}
		checkSame(t, pub, again)
	})
}

// FuzzDecodeClientInfo checks the same for client infos, and that
// DecodeUser agrees with DecodeClientInfo.
func FuzzDecodeClientInfo(f *testing.F) {
	f.Add(wire.AppendClientInfo(nil, enginetest.SamplePublication().Info))
	f.Add(wire.AppendClientInfo(nil, &engine.ClientInfo{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := wire.DecodeClientInfo(b)
		if err != nil {
			return
		}
		if u, err := wire.DecodeUser(b); err != nil || u != info.User {
			t.Fatalf("DecodeUser = %q, %v; DecodeClientInfo's user %q", u, err, info.User)
		}
		again, err := wire.DecodeClientInfo(wire.AppendClientInfo(nil, info))
		if err != nil || again.User != info.User || again.Client != info.Client ||
			!bytes.Equal(again.ConnInfo, info.ConnInfo) || !bytes.Equal(again.ChanInfo, info.ChanInfo) {
			t.Fatalf("re-encoding %+v gave %+v, %v", info, again, err)
		}
	})
}
