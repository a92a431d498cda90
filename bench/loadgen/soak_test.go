package loadgen

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSoakTrends(t *testing.T) {
	var flat, growing []SoakSample
	for i := range 30 {
		at := time.Duration(i) * 10 * time.Second
		flat = append(flat, SoakSample{At: at, Node: 1, RSS: 30 << 20, Goroutines: 100, OpenFDs: 120})
		growing = append(growing, SoakSample{At: at, Node: 1, RSS: float64(30<<20 + i*(4<<20)), Goroutines: 100 + float64(i*10), OpenFDs: 120})
	}
	for _, tr := range SoakTrends(flat, time.Minute) {
		if !tr.Flat {
			t.Errorf("flat samples: %s counted as growing (%v → %v)", tr.Gauge, tr.First, tr.Last)
		}
	}
	grew := map[string]bool{}
	for _, tr := range SoakTrends(growing, time.Minute) {
		grew[tr.Gauge] = !tr.Flat
	}
	if !grew["RSS"] || !grew["goroutines"] || grew["open files"] {
		t.Fatalf("growing RSS and goroutines, flat files: got %v", grew)
	}
	if got := SoakTrends(flat[:5], 0); len(got) != 0 {
		t.Fatalf("5 samples make no trend, got %v", got)
	}
	if SoakOK(SoakResult{Counts: SoakCounts{Gaps: 1}}, SoakTrends(flat, 0)) {
		t.Fatal("a gap passed")
	}
}

func TestScrapeNode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# HELP go_goroutines x\ngo_goroutines 42\nprocess_open_fds 17\nprocess_resident_memory_bytes 3.1457e+07\nherald_client_connections 5\nherald_client_connections_other 9\n")
	}))
	defer srv.Close()
	s, err := scrapeNode(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if s.Goroutines != 42 || s.OpenFDs != 17 || s.RSS != 3.1457e+07 || s.Clients != 5 {
		t.Fatalf("sample: %+v", s)
	}
	missing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "go_goroutines 1\n") }))
	defer missing.Close()
	if _, err := scrapeNode(missing.Client(), missing.URL); err == nil {
		t.Fatal("metrics without the process gauges accepted")
	}
}

func TestWriteSoakPNG(t *testing.T) {
	var samples []SoakSample
	for i := range 10 {
		for n := 1; n <= 2; n++ {
			samples = append(samples, SoakSample{At: time.Duration(i) * time.Minute, Node: n, RSS: 30 << 20, Goroutines: 100, OpenFDs: 120})
		}
	}
	var b bytes.Buffer
	if err := WriteSoakPNG(&b, "test", samples); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("\x89PNG")) {
		t.Fatalf("not a PNG: %d bytes", b.Len())
	}
}
