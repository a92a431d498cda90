package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const csvHead = "step,direction,offered_rate,duration_s,offered,sent,accepted,publish_errors,achieved_rate,lag_us,subscribers,expected,received,missing,duplicates,deliveries_per_s,first_p50_us,first_p95_us,first_p99_us,first_p999_us,first_max_us,all_p50_us,all_p95_us,all_p99_us,all_p999_us,all_max_us,last_p50_us,last_p95_us,last_p99_us,last_p999_us,last_max_us,server_cpu_percent,server_rss_bytes,bench_cpu_percent\n"

// row is a latency.csv line with the columns the table reads.
func row(rate string, firstUS, allUS, missing string, achieved string) string {
	return "1,up," + rate + ",5,0,0,0,0," + achieved + ",0,0,0,0," + missing + ",0,0,0,0," + firstUS + ",0,0,0,0," + allUS + ",0,0,0,0,0,0,0,0,0,0\n"
}

func writePoint(t *testing.T, dir, name, meta, csv string) {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if csv != "" {
		if err := os.WriteFile(filepath.Join(d, "latency.csv"), []byte(csvHead+csv), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTable: medians over runs, runs that did not reach a rate, the
// served rate (a missing copy at 400 ends it there), and a point without
// any step.
func TestTable(t *testing.T) {
	dir := t.TempDir()
	m := func(server string, run int) string {
		return `{"server":"` + server + `","engine":"memory","condition":"plain","run":` + string(rune('0'+run)) + `}`
	}
	writePoint(t, dir, "herald-1", m("herald", 1), row("200", "10000", "20000", "0", "200")+row("400", "30000", "40000", "0", "400"))
	writePoint(t, dir, "herald-2", m("herald", 2), row("200", "12000", "20000", "0", "200")+row("400", "50000", "40000", "0", "399"))
	writePoint(t, dir, "herald-3", m("herald", 3), row("200", "14000", "20000", "0", "200"))
	writePoint(t, dir, "cf-1", m("centrifugo", 1), row("200", "100000", "200000", "0", "200")+row("400", "900000", "900000", "3", "400"))
	writePoint(t, dir, "cf-2", m("centrifugo", 2), "")
	points, err := readPoints(dir, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeTable(&b, points); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"| msg/s | memory |",
		"| 200 | 12.0 / 100 (1 of 2) |",
		"| 400 | 40.0 (2 of 3) / 900 (1 of 2) |",
		"| highest rate served | 400 / 100 |",
	}
	for _, w := range want {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, b.String())
		}
	}
}

func TestServedRateNeedsEveryLowerRate(t *testing.T) {
	steps := []step{{rate: 200, served: true}, {rate: 400, served: false}, {rate: 600, served: true}, {rate: 100, served: true, direction: "down"}}
	if got := servedRate(steps); got != 200 {
		t.Fatalf("served %v, want 200", got)
	}
	if got := servedRate(nil); got != 0 {
		t.Fatalf("served %v with no steps", got)
	}
}
