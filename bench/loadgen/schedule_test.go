package loadgen

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSweepUpAndDown(t *testing.T) {
	steps, err := Sweep(100, 2000, 100, 15*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 39 {
		t.Fatalf("%d steps, want 20 up and 19 down", len(steps))
	}
	if steps[0].Rate != 100 || steps[19].Rate != 2000 || steps[20].Rate != 1900 || steps[38].Rate != 100 {
		t.Errorf("rates %v %v %v %v", steps[0].Rate, steps[19].Rate, steps[20].Rate, steps[38].Rate)
	}
	for i, s := range steps {
		if s.Down != (i >= 20) {
			t.Errorf("step %d (%v/s) down=%v", i, s.Rate, s.Down)
		}
		if s.Duration != 15*time.Second {
			t.Errorf("step %d lasts %v", i, s.Duration)
		}
	}
	if n := steps[19].Count(); n != 30000 {
		t.Errorf("2000/s for 15s: %d publications, want 30000", n)
	}
	up, _ := Sweep(100, 300, 100, time.Second, false)
	if len(up) != 3 || up[2].Down {
		t.Errorf("up-only sweep: %+v", up)
	}
	for _, bad := range [][3]float64{{0, 10, 1}, {10, 5, 1}, {1, 10, 0}} {
		if _, err := Sweep(bad[0], bad[1], bad[2], time.Second, false); err == nil {
			t.Errorf("Sweep%v accepted", bad)
		}
	}
}

func TestParseRates(t *testing.T) {
	s, err := ParseRates("100:300:100", time.Second, true)
	if err != nil || len(s) != 5 || s[4].Rate != 100 || !s[4].Down {
		t.Fatalf("sweep spec: %+v %v", s, err)
	}
	s, err = ParseRates("1, 10,50", 2*time.Second, false)
	if err != nil || len(s) != 3 || s[1].Rate != 10 || s[2].Duration != 2*time.Second {
		t.Fatalf("list spec: %+v %v", s, err)
	}
	for _, bad := range []string{"", "a", "1:2", "5,-1", "1:x:1"} {
		if _, err := ParseRates(bad, time.Second, false); err == nil {
			t.Errorf("ParseRates(%q) accepted", bad)
		}
	}
}

func TestStepOffsetsAreAbsolute(t *testing.T) {
	s := Step{Rate: 3, Duration: time.Second}
	// 1/3 s does not divide evenly: offsets come from q, never from the
	// previous offset, so the 3,000,000th is exactly 1,000,000 s.
	if got := s.Offset(3_000_000); got != 1_000_000*time.Second {
		t.Errorf("offset drifted: %v", got)
	}
	if s.Offset(1) != 333333333 || s.Offset(2) != 666666666 {
		t.Errorf("offsets %v %v", s.Offset(1), s.Offset(2))
	}
}

// fakeClock is a clock that only moves when the pacer sleeps or the test
// says so.
type fakeClock struct{ now int64 }

func (c *fakeClock) pacer(maxLag time.Duration) Pacer {
	return Pacer{
		Now: func() int64 { return c.now },
		SleepUntil: func(ctx context.Context, ns int64) error {
			if ns > c.now {
				c.now = ns
			}
			return ctx.Err()
		},
		MaxLag: maxLag,
	}
}

func TestPacerOnSchedule(t *testing.T) {
	c := &fakeClock{now: 1000}
	step := Step{Rate: 100, Duration: time.Second}
	var got []Message
	var sentAt []int64
	st, err := c.pacer(0).Run(context.Background(), 7, step, 5000, func(m Message) error {
		got = append(got, m)
		sentAt = append(sentAt, c.now)
		return nil
	})
	if err != nil || st.Emitted != 100 || len(got) != 100 {
		t.Fatalf("emitted %d (%d), err %v", st.Emitted, len(got), err)
	}
	for q, m := range got {
		due := int64(5000) + int64(q)*int64(10*time.Millisecond)
		if m.Step != 7 || m.N != 100 || m.Seq != q || m.Intended != due {
			t.Fatalf("message %d: %+v, want due %d", q, m, due)
		}
		if sentAt[q] != due {
			t.Fatalf("message %d sent at %d, due %d", q, sentAt[q], due)
		}
	}
	if st.MaxLag != 0 {
		t.Errorf("lag %v on an idle schedule", st.MaxLag)
	}
}

// TestPacerCoordinatedOmission stalls the sender for 200 ms at message 10:
// the messages due during the stall go out late, all at once, but keep
// their intended times, so latency measured from them includes the stall;
// and the schedule does not shift afterwards.
func TestPacerCoordinatedOmission(t *testing.T) {
	c := &fakeClock{}
	step := Step{Rate: 100, Duration: time.Second} // one every 10 ms
	var lat []time.Duration
	st, err := c.pacer(0).Run(context.Background(), 0, step, 0, func(m Message) error {
		if m.Seq == 10 {
			c.now += int64(200 * time.Millisecond) // the send blocks
		}
		lat = append(lat, time.Duration(c.now-m.Intended))
		return nil
	})
	if err != nil || st.Emitted != 100 {
		t.Fatalf("emitted %d, err %v", st.Emitted, err)
	}
	// Message 10 was due at 100 ms and completed at 300 ms; 11 was due
	// at 110 ms and could only go at 300 ms: 190 ms, and so on down.
	if lat[10] != 200*time.Millisecond || lat[11] != 190*time.Millisecond || lat[20] != 100*time.Millisecond {
		t.Errorf("latencies after the stall: %v %v %v", lat[10], lat[11], lat[20])
	}
	if lat[29] != 10*time.Millisecond || lat[30] != 0 || lat[99] != 0 {
		t.Errorf("schedule shifted after the stall: %v %v %v", lat[29], lat[30], lat[99])
	}
	if st.MaxLag != 190*time.Millisecond {
		t.Errorf("max lag %v, want 190ms", st.MaxLag)
	}
}

func TestPacerSaturates(t *testing.T) {
	c := &fakeClock{}
	step := Step{Rate: 1000, Duration: 10 * time.Second}
	st, err := c.pacer(50*time.Millisecond).Run(context.Background(), 3, step, 0, func(m Message) error {
		c.now += int64(2 * time.Millisecond) // the server takes 500/s
		return nil
	})
	if !errors.Is(err, ErrSaturated) {
		t.Fatalf("err %v, want ErrSaturated", err)
	}
	// Lag grows 1 ms per message: the limit is crossed at message 51.
	if st.Emitted < 45 || st.Emitted > 55 {
		t.Errorf("emitted %d before saturating", st.Emitted)
	}
}

func TestPacerStopsOnCancel(t *testing.T) {
	c := &fakeClock{}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := c.pacer(0).Run(ctx, 0, Step{Rate: 10, Duration: time.Minute}, 0, func(Message) error {
		if n++; n == 5 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 5 {
		t.Errorf("n %d err %v", n, err)
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	m := Message{Step: 12, N: 30000, Seq: 29999, Intended: 1764000000123456789}
	b := AppendPayload(nil, m, 128)
	if len(b) != 128 {
		t.Fatalf("payload of %d bytes, want 128: %s", len(b), b)
	}
	got, ok := ParsePayload(b)
	if !ok || got != m {
		t.Fatalf("parsed %+v %v from %s", got, ok, b)
	}
	// Re-encoded by a server: other order and spaces.
	got, ok = ParsePayload([]byte(`{ "t" : 5, "q": 1, "p":"xx", "n" :2, "k":0 }`))
	if !ok || got != (Message{Step: 0, N: 2, Seq: 1, Intended: 5}) {
		t.Fatalf("reordered: %+v %v", got, ok)
	}
	for _, bad := range []string{`{}`, `{"k":1,"n":2,"q":2,"t":1}`, `{"k":1,"n":0,"q":0,"t":1}`, `{"k":-1,"n":2,"q":0,"t":1}`, `{"k":1,"n":2,"q":0}`} {
		if _, ok := ParsePayload([]byte(bad)); ok {
			t.Errorf("ParsePayload(%s) accepted", bad)
		}
	}
	if got, ok := ParsePayload(AppendPayload(nil, m, 10)); !ok || got != m {
		t.Errorf("a too-small size must still carry the fields: %+v %v", got, ok)
	}
}

func TestSearch(t *testing.T) {
	// The system holds up to 700/s.
	s := NewSearch(100, 2, 0.05, 1e6)
	var probed []float64
	for range 30 {
		r, ok := s.Next()
		if !ok {
			break
		}
		probed = append(probed, r)
		s.Report(r <= 700)
	}
	if len(probed) < 5 || probed[0] != 100 || probed[1] != 200 || probed[3] != 800 {
		t.Fatalf("probes %v", probed)
	}
	if s.pass < 665 || s.pass > 700 || (s.fail-s.pass)/s.pass >= 0.05 {
		t.Errorf("search ended at pass %v fail %v (probes %v)", s.pass, s.fail, probed)
	}
	// Nothing passes.
	s = NewSearch(100, 2, 0.05, 1e6)
	for range 30 {
		r, ok := s.Next()
		if !ok {
			break
		}
		s.Report(false)
		_ = r
	}
	if s.pass != 0 {
		t.Errorf("pass %v", s.pass)
	}
}

func BenchmarkPayload(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = AppendPayload(buf[:0], Message{Step: 3, N: 30000, Seq: i % 30000, Intended: 1764000000123456789}, 128)
		if _, ok := ParsePayload(buf); !ok {
			b.Fatal("parse")
		}
	}
}
