package loadgen

import (
	"sync"
	"testing"
	"time"
)

func TestTallyMissingAndDuplicates(t *testing.T) {
	tl := NewTally(3, 2)
	msg := func(q int) Message { return Message{Step: 4, N: 5, Seq: q} }
	// Subscriber 0 gets everything, subscriber 1 misses seq 3 and gets
	// seq 1 twice, subscriber 2 gets only seq 0.
	for q := range 5 {
		tl.Record(0, 0, msg(q), time.Duration(q+1)*time.Millisecond)
	}
	for _, q := range []int{0, 1, 1, 2, 4} {
		tl.Record(1, 1, msg(q), 10*time.Millisecond)
	}
	tl.Record(1, 2, msg(0), 50*time.Millisecond)
	st, err := tl.Finalize(4, 5)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unique != 5+4+1 || st.Duplicates != 1 || st.Subscribers != 3 {
		t.Fatalf("unique %d dup %d subs %d", st.Unique, st.Duplicates, st.Subscribers)
	}
	wantFirst := []int32{1000, 2000, 3000, 4000, 5000}
	wantLast := []int32{50000, 10000, 10000, 4000, 10000}
	for q := range 5 {
		if st.FirstUs[q] != wantFirst[q] || st.LastUs[q] != wantLast[q] {
			t.Errorf("seq %d: first %d last %d, want %d %d", q, st.FirstUs[q], st.LastUs[q], wantFirst[q], wantLast[q])
		}
	}
	d, err := MergeTallies(5, []StepTally{st})
	if err != nil {
		t.Fatal(err)
	}
	if d.Expected != 15 || d.Received != 10 || d.Missing != 5 || d.Duplicates != 1 {
		t.Errorf("expected %d received %d missing %d dup %d", d.Expected, d.Received, d.Missing, d.Duplicates)
	}
	if d.All.Count() != 10 || d.First.Count() != 5 || d.Last.Count() != 5 {
		t.Errorf("histogram counts %d %d %d", d.All.Count(), d.First.Count(), d.Last.Count())
	}
	// After finalizing, copies are late, not counted again.
	tl.Record(0, 2, msg(1), time.Millisecond)
	if tl.Late() != 1 {
		t.Errorf("late %d, want 1", tl.Late())
	}
}

func TestTallyRejectsBadInput(t *testing.T) {
	tl := NewTally(2, 1)
	tl.Record(0, 5, Message{Step: 0, N: 3, Seq: 0}, 0)        // unknown subscriber
	tl.Record(3, 0, Message{Step: 0, N: 3, Seq: 0}, 0)        // unknown shard
	tl.Record(0, 0, Message{Step: maxSteps, N: 3, Seq: 0}, 0) // step out of range
	tl.Record(0, 0, Message{Step: 0, N: 3, Seq: 0}, 0)        // fine
	tl.Record(0, 0, Message{Step: 0, N: 4, Seq: 1}, 0)        // disagrees on N
	tl.Record(0, 1, Message{Step: 0, N: 3, Seq: 7}, 0)        // seq out of range
	if tl.Bad() != 5 {
		t.Errorf("bad %d, want 5", tl.Bad())
	}
	// A step nobody received still finalizes, all missing.
	st, err := tl.Finalize(9, 4)
	if err != nil || st.Unique != 0 || len(st.FirstUs) != 4 || st.FirstUs[0] != -1 {
		t.Fatalf("empty step: %+v %v", st, err)
	}
	d, _ := MergeTallies(4, []StepTally{st})
	if d.Missing != 8 {
		t.Errorf("missing %d, want 8", d.Missing)
	}
}

// TestMergeAcrossWorkers: two worker processes with two subscribers each;
// the first copy of a publication is the earliest over both, the last the
// latest, and refused publications are not expected.
func TestMergeAcrossWorkers(t *testing.T) {
	a, b := NewTally(2, 1), NewTally(2, 1)
	m := func(q int) Message { return Message{Step: 1, N: 3, Seq: q} }
	for sub := range 2 {
		a.Record(0, sub, m(0), time.Duration(10+sub)*time.Millisecond)
		b.Record(0, sub, m(0), time.Duration(5+sub)*time.Millisecond)
		a.Record(0, sub, m(1), 20*time.Millisecond)
		b.Record(0, sub, m(1), 30*time.Millisecond)
	}
	b.Record(0, 1, m(1), time.Millisecond) // duplicate in b
	ta, _ := a.Finalize(1, 3)
	tb, _ := b.Finalize(1, 3)
	// Seq 2 was refused by the server: 2 accepted.
	d, err := MergeTallies(2, []StepTally{ta, tb})
	if err != nil {
		t.Fatal(err)
	}
	if d.Subscribers != 4 || d.Expected != 8 || d.Received != 8 || d.Missing != 0 || d.Duplicates != 1 {
		t.Fatalf("%+v", d)
	}
	first, last := d.First.Percentiles(), d.Last.Percentiles()
	if first.Count != 2 || last.Count != 2 {
		t.Fatalf("first %d last %d publications", first.Count, last.Count)
	}
	// Seq 0: first 5 ms (b), last 11 ms (a); seq 1: first 20, last 30.
	if first.P50 < 4900*time.Microsecond || first.P50 > 5100*time.Microsecond || first.Max < 19*time.Millisecond || first.Max > 21*time.Millisecond {
		t.Errorf("first copies %+v", first)
	}
	if last.P50 < 10900*time.Microsecond || last.P50 > 11100*time.Microsecond || last.Max < 29*time.Millisecond || last.Max > 31*time.Millisecond {
		t.Errorf("last copies %+v", last)
	}
	tc := tb
	tc.N = 4
	if _, err := MergeTallies(2, []StepTally{ta, tc}); err == nil {
		t.Error("tallies with different N merged")
	}
}

func TestTallyConcurrentShards(t *testing.T) {
	const subs, n, shards = 40, 200, 4
	tl := NewTally(subs, shards)
	var wg sync.WaitGroup
	for sh := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sub := sh; sub < subs; sub += shards {
				for q := range n {
					tl.Record(sh, sub, Message{Step: 2, N: n, Seq: q}, time.Duration(q)*time.Microsecond)
					if q%10 == 0 {
						tl.Record(sh, sub, Message{Step: 2, N: n, Seq: q}, 0)
					}
				}
			}
		}()
	}
	wg.Wait()
	st, err := tl.Finalize(2, n)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unique != subs*n || st.Duplicates != subs*n/10 {
		t.Errorf("unique %d dup %d", st.Unique, st.Duplicates)
	}
}

func BenchmarkTallyRecord(b *testing.B) {
	tl := NewTally(500, 1)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tl.Record(0, i%500, Message{Step: i / 15_000_000, N: 30000, Seq: (i / 500) % 30000}, time.Millisecond)
		i++
	}
}
