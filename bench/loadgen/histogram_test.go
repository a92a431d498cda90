package loadgen

import (
	"testing"
	"time"
)

func TestHistogramPercentiles(t *testing.T) {
	h := NewHistogram()
	// 1..1000 ms, one value each: p50 = 500 ms, p99 = 990 ms, max 1 s.
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	p := h.Percentiles()
	if p.Count != 1000 {
		t.Fatalf("count %d, want 1000", p.Count)
	}
	near := func(name string, got, want time.Duration) {
		t.Helper()
		// Three significant digits: within 0.1%.
		if d := got - want; d < -want/1000 || d > want/1000 {
			t.Errorf("%s = %v, want %v ±0.1%%", name, got, want)
		}
	}
	near("p50", p.P50, 500*time.Millisecond)
	near("p95", p.P95, 950*time.Millisecond)
	near("p99", p.P99, 990*time.Millisecond)
	near("p99.9", p.P999, 999*time.Millisecond)
	near("max", p.Max, time.Second)
}

func TestHistogramEmptyAndClamps(t *testing.T) {
	h := NewHistogram()
	if p := h.Percentiles(); p != (Percentiles{}) {
		t.Fatalf("empty histogram: %+v", p)
	}
	h.Record(-5 * time.Microsecond)
	h.Record(time.Hour)
	p := h.Percentiles()
	if p.Count != 2 || h.Clipped != 1 {
		t.Fatalf("count %d clipped %d, want 2 and 1", p.Count, h.Clipped)
	}
	if p.P50 != 0 {
		t.Errorf("negative latency recorded as %v, want 0", p.P50)
	}
	if p.Max < 9*time.Minute || p.Max > 11*time.Minute {
		t.Errorf("clipped value recorded as %v, want about the 10 min ceiling", p.Max)
	}
}

func TestHistogramEncodeMerge(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	for i := range 100 {
		a.Record(time.Duration(i+1) * time.Millisecond)   // 1..100 ms
		b.Record(time.Duration(i+101) * time.Millisecond) // 101..200 ms
	}
	b.Clipped = 3
	enc, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeHistogram(enc, b.Clipped)
	if err != nil {
		t.Fatal(err)
	}
	if back.Count() != 100 || back.Clipped != 3 {
		t.Fatalf("decoded count %d clipped %d", back.Count(), back.Clipped)
	}
	a.Merge(back)
	p := a.Percentiles()
	if p.Count != 200 || a.Clipped != 3 {
		t.Fatalf("merged count %d clipped %d", p.Count, a.Clipped)
	}
	if p.P50 < 99*time.Millisecond || p.P50 > 101*time.Millisecond {
		t.Errorf("merged p50 %v, want ~100ms", p.P50)
	}
	if p.Max < 199*time.Millisecond || p.Max > 201*time.Millisecond {
		t.Errorf("merged max %v, want ~200ms", p.Max)
	}
	if _, err := DecodeHistogram("not base64!", 0); err == nil {
		t.Error("decoding garbage succeeded")
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	h := NewHistogram()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Record(time.Duration(i%100000) * time.Microsecond)
	}
}
