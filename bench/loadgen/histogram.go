package loadgen

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: latencies are recorded in microseconds from 1 µs to
// ten minutes with three significant digits; anything longer is recorded
// as the maximum and counted in Clipped.
const (
	histLowest  = 1
	histHighest = int64(10 * time.Minute / time.Microsecond)
	histSigFigs = 3
)

// Histogram is an HDR histogram of latencies. It is not safe for
// concurrent use.
type Histogram struct {
	h *hdrhistogram.Histogram
	// Clipped counts values above the histogram's range.
	Clipped int64
}

// NewHistogram makes an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(histLowest, histHighest, histSigFigs)}
}

// Record adds one latency. Negative values (a clock that disagrees by a
// few microseconds between processes) count as zero.
func (h *Histogram) Record(d time.Duration) {
	us := int64(d / time.Microsecond)
	if us < 0 {
		us = 0
	}
	if us > histHighest {
		us = histHighest
		h.Clipped++
	}
	// In range by construction, so RecordValue cannot fail.
	_ = h.h.RecordValue(us)
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Merge adds other's values into h.
func (h *Histogram) Merge(other *Histogram) {
	h.h.Merge(other.h)
	h.Clipped += other.Clipped
}

// Percentiles summarises the histogram.
func (h *Histogram) Percentiles() Percentiles {
	if h.h.TotalCount() == 0 {
		return Percentiles{}
	}
	v := h.h.ValueAtPercentilesSlice([]float64{50, 95, 99, 99.9})
	us := func(x int64) time.Duration { return time.Duration(x) * time.Microsecond }
	return Percentiles{
		Count: h.h.TotalCount(),
		P50:   us(v[0]), P95: us(v[1]), P99: us(v[2]), P999: us(v[3]),
		Max: us(h.h.Max()),
	}
}

// Encode serialises the histogram compactly (HdrHistogram V2, base64), to
// carry it from a worker process to the coordinator.
func (h *Histogram) Encode() (string, error) {
	b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram reverses Encode.
func DecodeHistogram(s string, clipped int64) (*Histogram, error) {
	if s == "" {
		return NewHistogram(), nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return &Histogram{h: h, Clipped: clipped}, nil
}

// Percentiles is a latency summary. Zero Count means no values.
type Percentiles struct {
	Count                    int64
	P50, P95, P99, P999, Max time.Duration
}
