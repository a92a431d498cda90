package wire_test

import (
	"testing"

	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/internal/wire"
)

func BenchmarkAppendPublication(b *testing.B) {
	p := enginetest.SamplePublication()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = wire.AppendPublication(buf[:0], p)
	}
}

func BenchmarkDecodePublication(b *testing.B) {
	enc := wire.AppendPublication(nil, enginetest.SamplePublication())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.DecodePublication(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeUser(b *testing.B) {
	enc := wire.AppendClientInfo(nil, enginetest.SamplePublication().Info)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.DecodeUser(enc); err != nil {
			b.Fatal(err)
		}
	}
}
