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
	writePointHead(t, dir, name, meta, csvHead, csv)
}

// writePointHead is writePoint with a latency.csv header of its own.
func writePointHead(t *testing.T, dir, name, meta, head, csv string) {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if csv != "" {
		if err := os.WriteFile(filepath.Join(d, "latency.csv"), []byte(head+csv), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTestPoints reads the points under dir, with the sweep's 2 s limit.
func readTestPoints(t *testing.T, dir string) []point {
	t.Helper()
	points, err := readPoints(dir, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return points
}

// table is the table sidebyside-table prints for the points under dir.
func table(t *testing.T, dir string) *strings.Builder {
	t.Helper()
	points := readTestPoints(t, dir)
	var b strings.Builder
	if err := writeTable(&b, points); err != nil {
		t.Fatal(err)
	}
	return &b
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
	b := table(t, dir)
	// The whole table: with no floor point it is what it was before the
	// floor columns existed, and the verdict follows it.
	want := "First-copy p99 in ms, Herald / Centrifugo; medians of 3 run(s) (in brackets: how many runs reached the rate, when not all did; — none did).\n" +
		"\n" +
		"| msg/s | memory |\n" +
		"|---|---|\n" +
		"| 200 | 12.0 / 100 (1 of 2) |\n" +
		"| 400 | 40.0 (2 of 3) / 900 (1 of 2) |\n" +
		"| highest rate served | 400 / 100 |\n" +
		"\n" +
		"| column | p99 at most half of Centrifugo's at every rate | highest rate served | met |\n" +
		"|---|---|---|---|\n" +
		"| memory | yes | 400 against 100: 4× | yes |\n" +
		"\n" +
		"Met in 1 of 1 columns.\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestVerdictSweepTop: when Centrifugo served the sweep's highest rate,
// a missed served rate is marked: the ratio is the sweep's bound, not a
// measurement. Where Centrifugo stopped below the top it is not.
func TestVerdictSweepTop(t *testing.T) {
	dir := t.TempDir()
	m := func(server, engine string) string {
		return `{"server":"` + server + `","engine":"` + engine + `","condition":"plain","run":1}`
	}
	steps := row("200", "1000", "2000", "0", "200") + row("400", "2000", "3000", "0", "400")
	writePoint(t, dir, "herald-redis", m("herald", "redis"), steps)
	writePoint(t, dir, "centrifugo-redis", m("centrifugo", "redis"), row("200", "9000", "9000", "0", "200")+row("400", "9000", "9000", "0", "400"))
	writePoint(t, dir, "herald-memory", m("herald", "memory"), row("200", "1000", "2000", "0", "200"))
	writePoint(t, dir, "centrifugo-memory", m("centrifugo", "memory"), row("200", "9000", "9000", "0", "200")+row("400", "9000", "9000", "2", "400"))
	b := table(t, dir).String()
	wantInTable(t, b,
		"| Redis 2 nodes | yes | 400 against 400: 1×‡ | no |\n",
		"| memory | not at 400 (not reached) | 200 against 200: 1× | no |\n",
		"‡: Centrifugo served every rate of the sweep, up to 400 msg/s: its highest rate served is at least that, and the ratio is a bound the sweep set (RATES must reach further). Marked: 1 of 2 missed served rates.\n",
	)
}

// TestTableFloor: the floor's points (engine "none") get a column of
// their own per condition, after the engines' columns, with their p99
// and highest rate served, and no "none" engine column.
func TestTableFloor(t *testing.T) {
	dir := t.TempDir()
	m := func(server, engine, condition string) string {
		return `{"server":"` + server + `","engine":"` + engine + `","condition":"` + condition + `","run":1}`
	}
	for _, c := range []string{"plain", "quota"} {
		writePoint(t, dir, "herald-memory-"+c, m("herald", "memory", c), row("200", "10000", "20000", "0", "200"))
		writePoint(t, dir, "herald-redis-"+c, m("herald", "redis", c), row("200", "20000", "30000", "0", "200"))
		writePoint(t, dir, "centrifugo-memory-"+c, m("centrifugo", "memory", c), row("200", "40000", "50000", "0", "200"))
		writePoint(t, dir, "centrifugo-redis-"+c, m("centrifugo", "redis", c), row("200", "60000", "70000", "0", "200"))
	}
	writePoint(t, dir, "floor-none-plain", m("floor", "none", "plain"), row("200", "3000", "4000", "0", "200")+row("400", "5000", "6000", "0", "400"))
	writePoint(t, dir, "floor-none-quota", m("floor", "none", "quota"), row("200", "7000", "8000", "0", "200")+row("400", "9000", "9000", "1", "400"))
	b := table(t, dir)
	want := []string{
		"First-copy p99 in ms, Herald / Centrifugo; medians of 1 run(s)",
		" The floor columns: bench/floor ",
		"| msg/s | memory | memory, 1-CPU quota | Redis 2 nodes | Redis 2 nodes, 1-CPU quota | floor | floor, 1-CPU quota |\n",
		"| 200 | 10.0 / 40.0 | 10.0 / 40.0 | 20.0 / 60.0 | 20.0 / 60.0 | 3.00 | 7.00 |\n",
		"| 400 | — / — | — / — | — / — | — / — | 5.00 | 9.00 |\n",
		"| highest rate served | 200 / 200 | 200 / 200 | 200 / 200 | 200 / 200 | 400 | 200 |\n",
	}
	for _, w := range want {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, b.String())
		}
	}
	if strings.Contains(b.String(), "| none") {
		t.Errorf("table has a column of engine none:\n%s", b.String())
	}
}

// TestTableOneNode: points of a networked engine on one node (NODES=1)
// get columns of their own, beside the 2-node ones; memory's "nodes":1
// changes nothing.
func TestTableOneNode(t *testing.T) {
	dir := t.TempDir()
	m := func(engine string, nodes int) string {
		return `{"server":"herald","engine":"` + engine + `","condition":"plain","run":1,"nodes":` + string(rune('0'+nodes)) + `}`
	}
	writePoint(t, dir, "herald-memory", m("memory", 1), row("200", "10000", "20000", "0", "200"))
	writePoint(t, dir, "herald-redis-1", m("redis", 1), row("200", "20000", "30000", "0", "200"))
	writePoint(t, dir, "herald-redis-2", m("redis", 2), row("200", "30000", "40000", "0", "200"))
	b := table(t, dir)
	for _, w := range []string{
		"| msg/s | memory | Redis 2 nodes | Redis 1 node |\n",
		"| 200 | 10.0 | 30.0 | 20.0 |\n",
	} {
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

// TestVerdict: per engine column, the rates where Herald's median p99 is
// above half of Centrifugo's or that Herald did not reach, the ratio of
// the highest rates served, and whether both targets were met; a rate
// Centrifugo did not reach counts for Herald; the floor gets no row, and
// misses whose target is beyond the floor's figure are marked.
func TestVerdict(t *testing.T) {
	dir := t.TempDir()
	m := func(server, engine, condition string) string {
		return `{"server":"` + server + `","engine":"` + engine + `","condition":"` + condition + `","run":1,"cpu_busy_before":0.012,"cpu_steal_before":0.001,"settled_after":"3s"}`
	}
	// memory, plain: 400 at 0.6 of Centrifugo's; 600 reached by Herald alone.
	writePoint(t, dir, "h-mem-plain", m("herald", "memory", "plain"),
		row("200", "10000", "20000", "0", "200")+row("400", "30000", "40000", "0", "400")+row("600", "50000", "60000", "0", "600"))
	writePoint(t, dir, "c-mem-plain", m("centrifugo", "memory", "plain"),
		row("200", "40000", "50000", "0", "200")+row("400", "50000", "60000", "0", "400"))
	// memory, quota: met (half at every rate, 2× the rate served).
	writePoint(t, dir, "h-mem-quota", m("herald", "memory", "quota"),
		row("200", "10000", "20000", "0", "200")+row("400", "20000", "30000", "0", "400"))
	writePoint(t, dir, "c-mem-quota", m("centrifugo", "memory", "quota"),
		row("200", "40000", "50000", "0", "200")+row("400", "900000", "900000", "5", "400"))
	// Redis, plain: Herald did not reach 400, Centrifugo did.
	writePoint(t, dir, "h-redis-plain", m("herald", "redis", "plain"), row("200", "10000", "20000", "0", "200"))
	writePoint(t, dir, "c-redis-plain", m("centrifugo", "redis", "plain"),
		row("200", "30000", "40000", "0", "200")+row("400", "40000", "50000", "0", "400"))
	writePoint(t, dir, "floor-none-plain", `{"server":"floor","engine":"none","condition":"plain","run":1,"cpu_busy_before":0.031,"cpu_steal_before":0.004,"settled_after":"12s"}`,
		row("200", "3000", "4000", "0", "200")+row("400", "22000", "23000", "0", "400"))
	b := table(t, dir)
	// The floor's 22 ms at 400 is below half of Centrifugo's memory figure
	// (25) and above half of its Redis one (20): only Redis's p99 miss is
	// beyond the floor, and so is its served rate (1.5 × 400 above the
	// floor's 400); the quota column has no floor to compare with.
	want := "\n| column | p99 at most half of Centrifugo's at every rate | highest rate served | met |\n" +
		"|---|---|---|---|\n" +
		"| memory | not at 400 (0.60) | 600 against 400: 1.5× | no |\n" +
		"| memory, 1-CPU quota | yes | 400 against 200: 2× | yes |\n" +
		"| Redis 2 nodes | not at 400 (not reached†) | 200 against 400: 0.5×† | no |\n" +
		"\nMet in 1 of 3 columns.\n" +
		"\n†: the target there is beyond what the floor got in the same condition and runs (half of Centrifugo's p99 below the floor's, or 1.5 times Centrifugo's highest rate served above the floor's). Marked: 1 of 2 missed p99 points, 1 of 1 missed served rates.\n" +
		"\nThe machine in the second before each point: CPUs busy 1.2–3.1%, stolen by the hypervisor 0.1–0.4%; the longest wait for such a second 12s.\n"
	if !strings.HasSuffix(b.String(), want) {
		t.Errorf("table ends:\n%s\nwant it to end:\n%s", b.String(), want)
	}
}

// TestVerdictNeedsBothServers: a run of Herald alone gets no verdict, and
// points without the machine's shares (runs before settle) no machine line.
func TestVerdictNeedsBothServers(t *testing.T) {
	dir := t.TempDir()
	writePoint(t, dir, "h", `{"server":"herald","engine":"memory","condition":"plain","run":1}`, row("200", "10000", "20000", "0", "200"))
	b := table(t, dir)
	if strings.Contains(b.String(), "| met |") || strings.Contains(b.String(), "The machine") {
		t.Errorf("table of Herald alone has a verdict or a machine line:\n%s", b.String())
	}
}

// TestFloorIntervals: with floor points at more than one round interval,
// each floor cell is the best interval's median (named in brackets, with
// how many of its runs reached the rate), the highest rate served the
// best interval's, and a † is judged against the best.
func TestFloorIntervals(t *testing.T) {
	dir := t.TempDir()
	m := func(server, engine string, run int, interval string) string {
		iv := ""
		if interval != "" {
			iv = `,"floor_round_interval":"` + interval + `"`
		}
		return `{"server":"` + server + `","engine":"` + engine + `","condition":"plain","run":` + string(rune('0'+run)) + iv + `}`
	}
	writePoint(t, dir, "herald", m("herald", "memory", 1, ""), row("200", "10000", "20000", "0", "200")+row("400", "30000", "40000", "0", "400"))
	writePoint(t, dir, "centrifugo", m("centrifugo", "memory", 1, ""), row("200", "16000", "20000", "0", "200")+row("400", "50000", "60000", "0", "400"))
	// Round by round (a point from before the intervals: no field): best
	// at 200, and at 400 above half of Centrifugo's, where it misses a copy.
	writePoint(t, dir, "floor-none-plain-run1", m("floor", "none", 1, ""), row("200", "9000", "10000", "0", "200")+row("400", "40000", "50000", "1", "400"))
	// At 2 ms: worse at 200, best at 400 (reached by one of its two runs),
	// below half of Centrifugo's there.
	writePoint(t, dir, "floor-2ms-none-plain-run1", m("floor", "none", 1, "2ms"), row("200", "12000", "13000", "0", "200")+row("400", "20000", "30000", "0", "400"))
	writePoint(t, dir, "floor-2ms-none-plain-run2", m("floor", "none", 2, "2ms"), row("200", "12000", "13000", "0", "200"))
	b := table(t, dir).String()
	wantInTable(t, b,
		"(round intervals 0, 2ms; 0: round by round)",
		"| 200 | 10.0 / 16.0 | 9.00 (0) |\n",
		"| 400 | 30.0 / 50.0 | 20.0 (2ms; 1 of 2) |\n",
		"| highest rate served | 400 / 400 | 300 (2ms) |\n",
		// 200: half of 16 is below the best floor's 9 (†); 400: half of
		// 50 is above the 2 ms floor's 20, though below round by round's 40.
		"| memory | not at 200, 400 (0.62†, 0.60) | 400 against 400: 1×‡† | no |\n",
		"Marked: 1 of 2 missed p99 points, 1 of 1 missed served rates.",
	)
}

// TestCSVThrottle: the servers' cgroup throttling of each step, in the
// latency.csv of a run under the quota, reaches points.csv; a latency.csv
// from before herald-bench read it gives zeros, not an error.
func TestCSVThrottle(t *testing.T) {
	dir := t.TempDir()
	m := `{"server":"herald","engine":"redis","condition":"quota","run":1}`
	head := strings.TrimSuffix(csvHead, "\n") + ",server_cgroup_periods,server_cgroup_throttled,server_cgroup_throttled_us\n"
	withCgroup := strings.TrimSuffix(row("200", "9000", "20000", "0", "200"), "\n") + ",100,6,21000\n"
	writePointHead(t, dir, "herald-redis-quota-run1", m, head, withCgroup)
	writePoint(t, dir, "centrifugo-redis-quota-run1", `{"server":"centrifugo","engine":"redis","condition":"quota","run":1}`, row("200", "17000", "30000", "0", "200"))
	points := readTestPoints(t, dir)
	var b strings.Builder
	if err := writeCSV(&b, points); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.HasSuffix(lines[0], ",cgroup_periods,cgroup_throttled,cgroup_throttled_ms") {
		t.Fatalf("header: %s", lines[0])
	}
	got := map[string]string{}
	for _, l := range lines[1:] {
		got[strings.SplitN(l, ",", 2)[0]] = l
	}
	if !strings.HasSuffix(got["herald"], ",100,6,21.000") || !strings.HasSuffix(got["centrifugo"], ",0,0,0.000") {
		t.Errorf("rows:\n%s", b.String())
	}

	bad := strings.TrimSuffix(row("200", "9000", "20000", "0", "200"), "\n") + ",100,x,0\n"
	if _, err := readSteps(strings.NewReader(head+bad), 2*time.Second); err == nil || !strings.Contains(err.Error(), "cgroup") {
		t.Errorf("a throttled count that is not a number: %v", err)
	}
}

// TestFloorRedis: two floors relaying through Redis (engine "redis") get
// columns of their own beside the one-process floor's, and the Redis
// columns are held against them (the table's †, the chart's floor line),
// the other engines against the one-process floor.
func TestFloorRedis(t *testing.T) {
	dir := t.TempDir()
	m := func(server, engine string) string {
		return `{"server":"` + server + `","engine":"` + engine + `","condition":"plain","run":1}`
	}
	// At 200 Herald misses on both engines (0.6 of Centrifugo's 20 ms).
	for _, e := range []string{"memory", "redis"} {
		writePoint(t, dir, "herald-"+e, m("herald", e), row("200", "12000", "20000", "0", "200"))
		writePoint(t, dir, "centrifugo-"+e, m("centrifugo", e), row("200", "20000", "30000", "0", "200"))
	}
	// The one-process floor got 8 ms (below half of Centrifugo's 10: the
	// memory miss is not marked); through Redis it got 11 (the Redis miss is).
	writePoint(t, dir, "floor-none-plain-run1", m("floor", "none"), row("200", "8000", "9000", "0", "200"))
	writePoint(t, dir, "floor-redis-plain-run1", `{"server":"floor","engine":"redis","condition":"plain","run":1,"nodes":2}`,
		row("200", "11000", "12000", "0", "200"))
	b := table(t, dir).String()
	wantInTable(t, b,
		` The columns "floor, Redis 2 nodes": two such processes relaying through the run's Redis`,
		"| msg/s | memory | Redis 2 nodes | floor | floor, Redis 2 nodes |\n",
		"| 200 | 12.0 / 20.0 | 12.0 / 20.0 | 8.00 | 11.0 |\n",
		"| memory | not at 200 (0.60) |",
		"| Redis 2 nodes | not at 200 (0.60†) |",
		"what the floor (for the Redis columns, the floor through Redis) got",
		"Marked: 1 of 2 missed p99 points",
	)
	points := readTestPoints(t, dir)
	l := layoutOf(points)
	for _, c := range l.cols {
		if c.floor {
			continue
		}
		want := map[string]float64{"memory": 8, "redis": 11}[c.engine]
		for _, s := range panelSeries(points, l, c) {
			if s.name == seriesFloor && (len(s.xy) != 1 || s.xy[0].Y != want) {
				t.Errorf("%s panel: floor line %v, want one point at %v", c.title(), s.xy, want)
			}
		}
	}
}

// wantInTable checks that table b contains each of wants.
func wantInTable(t *testing.T, b string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(b, w) {
			t.Errorf("table lacks %q:\n%s", w, b)
		}
	}
}
