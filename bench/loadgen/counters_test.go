package loadgen

import (
	"strings"
	"testing"
	"time"
)

func TestAggregatorAcrossWorkers(t *testing.T) {
	a := NewAggregator(3)
	a.Update(0, Counters{Connected: 100, Current: 100, RSS: 10 << 20})
	a.Update(1, Counters{Connected: 50, Current: 48, Disconnected: 2, Failed: 1})
	s := a.Tick(time.Second)
	if s.Current != 148 || s.Peak != 148 || s.NewConnected != 150 || s.NewDisconnected != 2 || s.Failed != 1 {
		t.Fatalf("first tick %+v", s)
	}
	if s.Totals.RampDone {
		t.Error("ramp done before any worker said so")
	}
	// Cumulative counters: a repeated report changes nothing; a newer one
	// replaces the worker's older one.
	a.Update(0, Counters{Connected: 100, Current: 100, RampDone: true})
	a.Update(1, Counters{Connected: 80, Current: 60, Disconnected: 20, Failed: 1, RampDone: true})
	a.Update(2, Counters{Connected: 10, Current: 10, RampDone: true})
	a.Update(7, Counters{Connected: 1e9}) // unknown worker: ignored
	s = a.Tick(2 * time.Second)
	if s.Current != 170 || s.Peak != 170 || s.NewConnected != 40 || s.NewDisconnected != 18 || s.Failed != 1 {
		t.Fatalf("second tick %+v", s)
	}
	if !s.Totals.RampDone {
		t.Error("all workers ramped, total says not")
	}
	a.Update(2, Counters{Connected: 10, Current: 0, Disconnected: 10, RampDone: true})
	s = a.Tick(3 * time.Second)
	if s.Current != 160 || s.Peak != 170 || s.NewConnected != 0 || s.NewDisconnected != 10 {
		t.Fatalf("third tick %+v", s)
	}
}

func TestFormatStatus(t *testing.T) {
	s := Status{Elapsed: 12*time.Second + 400*time.Millisecond, Current: 118000, Peak: 120500, NewConnected: 1000, NewDisconnected: 3, Failed: 12,
		Target: 236000, Totals: Counters{RSS: 300 << 20}, Server: &ProcSample{RSS: 3 << 30, CPUPercent: 85.4}}
	got := FormatStatus(s)
	want := "   12s  current 118,000  peak 120,500  +1,000/s  -3/s  failed 12  server rss 3.00 GiB cpu 85%  client rss 300.0 MiB"
	if got != want {
		t.Errorf("status line\n got %q\nwant %q", got, want)
	}
	p := FormatProgress(s, 10)
	if !strings.HasPrefix(p, "[#####.....]  50% ") || !strings.HasSuffix(p, want) {
		t.Errorf("progress %q", p)
	}
	if g := group(-1234567); g != "-1,234,567" {
		t.Errorf("group: %q", g)
	}
	if g := group(999); g != "999" {
		t.Errorf("group: %q", g)
	}
}

func TestSplitJobs(t *testing.T) {
	jobs, err := SplitJobs(Job{Kind: JobConns}, 100001, 19000, 0, 6000)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 6 {
		t.Fatalf("%d workers, want 6", len(jobs))
	}
	total := 0
	for i, j := range jobs {
		total += j.Count
		if j.Count > 19000 || j.First != i || j.Stride != 6 || j.Rate != 1000 || j.Worker != i {
			t.Errorf("job %d: %+v", i, j)
		}
	}
	if total != 100001 {
		t.Errorf("total %d", total)
	}
	if _, err := SplitJobs(Job{}, 100000, 19000, 2, 0); err == nil || !strings.Contains(err.Error(), "at least 6 workers") {
		t.Errorf("too few workers: %v", err)
	}
	jobs, _ = SplitJobs(Job{}, 3, 19000, 8, 0)
	if len(jobs) != 3 {
		t.Errorf("more workers than connections: %d", len(jobs))
	}
}

func TestMedian(t *testing.T) {
	if m := median([]int64{5, 1, 9, 3}); m != 3 {
		t.Errorf("median %d", m)
	}
	if m := median(nil); m != 0 {
		t.Errorf("median of nothing %d", m)
	}
}
