package loadgen

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"
)

func sampleSteps() []StepResult {
	p := func(ms float64) Percentiles {
		d := time.Duration(ms * float64(time.Millisecond))
		return Percentiles{Count: 10, P50: d, P95: 2 * d, P99: 3 * d, P999: 4 * d, Max: 5 * d}
	}
	return []StepResult{
		{Index: 1, Rate: 100, Achieved: 99.5, Deliveries: 50000, Duration: 15 * time.Second, First: p(1), All: p(2.5), Last: p(4), ServerCPU: 41, BenchCPU: 30},
		{Index: 2, Rate: 100, Down: true, Achieved: 100, Missing: 3, Duplicates: 1, All: p(150)},
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sampleSteps()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	cols := strings.Count(lines[0], "|")
	for i, l := range lines {
		if strings.Count(l, "|") != cols {
			t.Errorf("line %d has %d cells, header %d: %s", i, strings.Count(l, "|"), cols, l)
		}
	}
	want := "| 1↑ | 100 | 100 | 50000 | 1.00 | 2.00 | 3.00 | 5.00 | 2.50 | 5.00 | 7.50 | 12.5 | 12.0 | 0 | 0 | 41 | 30 |"
	if lines[2] != want {
		t.Errorf("row\n got %s\nwant %s", lines[2], want)
	}
	if !strings.HasPrefix(lines[3], "| 2↓ | 100 |") || !strings.Contains(lines[3], "| 150 | 300 | 450 | 750 |") {
		t.Errorf("down row: %s", lines[3])
	}
}

// Under a quota the table gains the throttling columns on every row, so a
// step without throttling reads 0 rather than shifting the cells.
func TestWriteMarkdownQuota(t *testing.T) {
	steps := sampleSteps()
	steps[0].ServerThrottle = CPUThrottle{Periods: 150, Throttled: 12, Waited: 340 * time.Millisecond}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, steps); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.HasSuffix(lines[0], "| throttled periods | throttled ms |") {
		t.Fatalf("header: %s", lines[0])
	}
	cols := strings.Count(lines[0], "|")
	for i, l := range lines {
		if strings.Count(l, "|") != cols {
			t.Errorf("line %d has %d cells, header %d: %s", i, strings.Count(l, "|"), cols, l)
		}
	}
	if !strings.HasSuffix(lines[2], "| 41 | 30 | 12 of 150 | 340 |") || !strings.HasSuffix(lines[3], "| 0 of 0 | 0.00 |") {
		t.Errorf("rows:\n%s\n%s", lines[2], lines[3])
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, sampleSteps()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if rows[1][col["all_p99_us"]] != "7500" || rows[2][col["direction"]] != "down" || rows[2][col["missing"]] != "3" || rows[1][col["bench_cpu_percent"]] != "30.00" ||
		rows[1][col["server_cgroup_throttled_us"]] != "0" {
		t.Errorf("rows %v", rows[1:])
	}
}

func TestWritePNG(t *testing.T) {
	var b bytes.Buffer
	if err := WritePNG(&b, "test", sampleSteps()); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("\x89PNG\r\n\x1a\n")) || b.Len() < 1000 {
		t.Errorf("not a PNG: %d bytes", b.Len())
	}
}
