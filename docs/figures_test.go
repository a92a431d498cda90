package docs_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/test/golden"
)

// figures is figures.json: the measured figures the documents quote, each
// with the command that measures it and when it was measured.
type figures struct {
	IdleMemory struct {
		What      string    `json:"what"`
		Command   string    `json:"command"`
		Measured  string    `json:"measured"`
		RunsKiB   []float64 `json:"runs_kib"`
		MedianKiB float64   `json:"median_kib"`
	} `json:"idle_memory"`
	PostgresScaleout struct {
		What               string        `json:"what"`
		Command            string        `json:"command"`
		Measured           string        `json:"measured"`
		SubscribersPerNode int           `json:"subscribers_per_node"`
		Rows               []scaleoutRow `json:"rows"`
	} `json:"postgres_scaleout"`
}

// scaleoutRow is one step of bench/scaleout.sh's curve (scaleout.md).
type scaleoutRow struct {
	Nodes        int     `json:"nodes"`
	Rate         int     `json:"rate"`
	Achieved     int     `json:"achieved"` // 0: the rate asked
	PGCPUPerPub  float64 `json:"pg_cpu_us_per_pub"`
	PGCPUPercent float64 `json:"pg_cpu_pct_of_core"`
	Listener     int     `json:"listener_records_per_s"`
	Copies       int     `json:"client_copies_per_s"`
	P99          string  `json:"p99"`
	IdlePerPub   float64 `json:"idle_node_us_per_pub"`
	Node1PerPub  float64 `json:"node1_us_per_pub"`
}

func loadFigures(t *testing.T) figures {
	t.Helper()
	data, err := os.ReadFile("figures.json")
	if err != nil {
		t.Fatal(err)
	}
	var f figures
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("figures.json: %v", err)
	}
	return f
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// flat joins a document's lines, so that a sentence matches wherever the
// text is wrapped.
func flat(doc string) string { return strings.Join(strings.Fields(doc), " ") }

// TestFiguresIdleMemory checks the memory per idle connection: the median
// in figures.json is its runs', docs/benchmarks.md records those runs, and
// the README and the targets table of docs/benchmarks.md state it.
func TestFiguresIdleMemory(t *testing.T) {
	m := loadFigures(t).IdleMemory
	runs := slices.Sorted(slices.Values(m.RunsKiB))
	if len(runs) == 0 || runs[len(runs)/2] != m.MedianKiB {
		t.Fatalf("figures.json: idle_memory.median_kib %v is not the median of runs_kib %v", m.MedianKiB, m.RunsKiB)
	}
	kib := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	var list []string
	for _, r := range m.RunsKiB {
		list = append(list, kib(r))
	}
	bench := flat(readDoc(t, "benchmarks.md"))
	record := fmt.Sprintf("%s and %s KiB, median %s KiB", strings.Join(list[:len(list)-1], ", "), list[len(list)-1], kib(m.MedianKiB))
	if !strings.Contains(bench, record) {
		t.Errorf("docs/benchmarks.md does not record the runs of figures.json's idle_memory: no %q", record)
	}
	target := fmt.Sprintf("| ≤ 8 KiB per idle connection | %s KiB at 19,000 on one node", kib(m.MedianKiB))
	if !strings.Contains(bench, target) {
		t.Errorf("docs/benchmarks.md's targets table does not state figures.json's idle_memory: no %q", target)
	}
	readme := flat(readDoc(t, "../README.md"))
	claim := fmt.Sprintf("%.1f KiB of server memory per idle connection", m.MedianKiB)
	if !strings.Contains(readme, claim) {
		got := regexp.MustCompile(`[0-9.]+ KiB of server memory per idle connection`).FindString(readme)
		t.Errorf("README.md says %q; figures.json's idle_memory says %q", got, claim)
	}
}

const (
	figuresOpen  = "<!-- figures: postgres_scaleout -->"
	figuresClose = "<!-- end figures -->"
)

// TestFiguresPostgresScaleout checks the scale-out table of
// docs/postgres.md: generated from figures.json, whose rows must agree
// with themselves (PostgreSQL's share of a core is the rate times its CPU
// per publication; every node and the idle one read every publication;
// each node's subscribers get every one).
func TestFiguresPostgresScaleout(t *testing.T) {
	s := loadFigures(t).PostgresScaleout
	if len(s.Rows) == 0 {
		t.Fatal("figures.json: postgres_scaleout has no rows")
	}
	near := func(got, want, tolerance float64) bool { return math.Abs(got-want) <= tolerance*want }
	for _, r := range s.Rows {
		rate := float64(r.Rate)
		if r.Achieved > 0 {
			rate = float64(r.Achieved)
		}
		if pct := rate * r.PGCPUPerPub / 1e4; math.Abs(pct-r.PGCPUPercent) > 1 {
			t.Errorf("%d nodes at %d/s: %v%% of a core, but %v/s × %v µs is %.1f%%", r.Nodes, r.Rate, r.PGCPUPercent, rate, r.PGCPUPerPub, pct)
		}
		if want := rate * float64(r.Nodes+1); !near(float64(r.Listener), want, 0.01) {
			t.Errorf("%d nodes at %d/s: %d listener records/s, want about %.0f (%d listeners)", r.Nodes, r.Rate, r.Listener, want, r.Nodes+1)
		}
		if want := float64(r.Rate * r.Nodes * s.SubscribersPerNode); !near(float64(r.Copies), want, 0.05) {
			t.Errorf("%d nodes at %d/s: %d copies/s, want about %.0f", r.Nodes, r.Rate, r.Copies, want)
		}
	}
	golden.Check(t, "postgres.md", "go test ./docs -run Figures -update", func(old []byte) ([]byte, error) {
		doc := string(old)
		i, j := strings.Index(doc, figuresOpen), strings.Index(doc, figuresClose)
		if i < 0 || j < i {
			return nil, fmt.Errorf("no %s … %s around the scale-out table", figuresOpen, figuresClose)
		}
		return []byte(doc[:i+len(figuresOpen)] + "\n\n" + scaleoutTable(s.Rows) + "\n" + doc[j:]), nil
	})
}

func scaleoutTable(rows []scaleoutRow) string {
	var b strings.Builder
	b.WriteString("| nodes | rate/s | PG CPU µs/pub | PG CPU % of a core | listener records/s (all nodes) | client copies/s | p99 (all copies) | idle node µs/pub | node 1 µs/pub |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		rate := thousands(r.Rate)
		if r.Achieved > 0 {
			rate += " (" + thousands(r.Achieved) + " achieved)"
		}
		fmt.Fprintf(&b, "| %d | %s | %g | %g | %s | %s | %s | %g | %g |\n", r.Nodes, rate, r.PGCPUPerPub, r.PGCPUPercent,
			thousands(r.Listener), thousands(r.Copies), r.P99, r.IdlePerPub, r.Node1PerPub)
	}
	return b.String()
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
