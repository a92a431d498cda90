// Command sidebyside-table reads the points of a bench/sidebyside.sh run
// (points/<server>-<engine>-<condition>-run<k>/, each with meta.json and
// herald-bench latency's latency.csv) and prints the Markdown table
// docs/benchmarks.md carries: per rate, the median over the runs of the
// first copy's p99 in ms, Herald / Centrifugo, for every engine and
// condition, and the highest rate each served. The points of bench/floor
// (server "floor", engine "none") get a column per condition of their
// own: the floor of the machine under the same probe. With -csv it also
// writes one row per point and rate; with -png, a chart of the table
// (chart.go).
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
)

func main() {
	limit := flag.Duration("p99-limit", 2*time.Second, "a step is served when its all-copies p99 is at most this, no copy is missing, no publish failed and it achieved 95% of its rate")
	csvPath := flag.String("csv", "", "also write one row per point and rate to this file")
	pngPath := flag.String("png", "", "also draw the table's p99s to this PNG file: a panel per engine and condition, Herald, Centrifugo, half of Centrifugo's and the floor")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: sidebyside-table [-p99-limit 2s] [-csv FILE] [-png FILE] POINTS_DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	points, err := readPoints(flag.Arg(0), *limit)
	if err == nil && *csvPath != "" {
		err = writeFile(*csvPath, func(w io.Writer) error { return writeCSV(w, points) })
	}
	if err == nil {
		err = writeTable(os.Stdout, points)
	}
	if err == nil && *pngPath != "" {
		err = writeFile(*pngPath, func(w io.Writer) error { return writeChart(w, points) })
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside-table:", err)
		os.Exit(1)
	}
}

// meta is a point's meta.json (the fields the table needs).
type meta struct {
	Server    string `json:"server"`
	Engine    string `json:"engine"`
	Condition string `json:"condition"`
	Run       int    `json:"run"`
	// The machine in the second before the point (bench/lib.sh's
	// settle): the CPUs' busy and steal shares, and how long the script
	// waited for that second. Absent from runs before settle existed.
	CPUBusyBefore  *float64 `json:"cpu_busy_before"`
	CPUStealBefore *float64 `json:"cpu_steal_before"`
	SettledAfter   string   `json:"settled_after"`
	// Nodes is how many nodes the point ran (sidebyside.sh's NODES);
	// absent from runs before NODES existed, which ran networked engines
	// on 2.
	Nodes int `json:"nodes"`
	// FloorRoundInterval is a floor point's round interval (its
	// -round-interval; floor.go); absent from runs before it existed,
	// which went round by round.
	FloorRoundInterval string `json:"floor_round_interval"`
}

// oneNodeSuffix marks the engine of a point that ran a networked engine on
// one node (NODES=1), so that it gets columns of its own: its figures
// answer another question (what the engine's round trip costs without a
// second node) and must not mix with the 2-node ones.
const oneNodeSuffix = "-1node"

// step is one rate of a point, from latency.csv.
type step struct {
	rate      float64
	firstP99  time.Duration
	allP99    time.Duration
	missing   int64
	errors    int64
	achieved  float64
	served    bool
	direction string
	// The servers' CPU cgroup throttling over the step (latency.csv's
	// server_cgroup_* columns; zero without a quota, or in a run from
	// before herald-bench read it).
	periods, throttled int64
	waited             time.Duration
}

// point is one sweep: a server, engine, condition and run.
type point struct {
	meta
	steps []step
	// servedRate is the highest rate such that it and every lower rate
	// were served (0: none was).
	servedRate float64
}

func readPoints(dir string, limit time.Duration) ([]point, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []point
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p, err := readPoint(filepath.Join(dir, e.Name()), limit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no points in %s", dir)
	}
	return out, nil
}

func readPoint(dir string, limit time.Duration) (point, error) {
	var p point
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p.meta); err != nil {
		return p, fmt.Errorf("meta.json: %w", err)
	}
	if p.Nodes == 1 && p.Engine != "memory" && p.Server != floorServer {
		p.Engine += oneNodeSuffix
	}
	f, err := os.Open(filepath.Join(dir, "latency.csv"))
	if os.IsNotExist(err) {
		// The sweep did not get to its first step (the server did not
		// serve the subscribers): a point that served nothing.
		return p, nil
	}
	if err != nil {
		return p, err
	}
	defer f.Close()
	p.steps, err = readSteps(f, limit)
	if err != nil {
		return p, fmt.Errorf("latency.csv: %w", err)
	}
	p.servedRate = servedRate(p.steps)
	return p, nil
}

// readSteps reads herald-bench latency's CSV (loadgen.WriteCSV).
func readSteps(r io.Reader, limit time.Duration) ([]step, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"direction", "offered_rate", "first_p99_us", "all_p99_us", "missing", "publish_errors", "achieved_rate"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("no column %s", h)
		}
	}
	var out []step
	for _, row := range rows[1:] {
		num := func(h string) (float64, error) { return strconv.ParseFloat(row[col[h]], 64) }
		var s step
		var vals [6]float64
		for i, h := range []string{"offered_rate", "first_p99_us", "all_p99_us", "missing", "publish_errors", "achieved_rate"} {
			if vals[i], err = num(h); err != nil {
				return nil, fmt.Errorf("%s: %w", h, err)
			}
		}
		s.direction = row[col["direction"]]
		s.rate = vals[0]
		s.firstP99 = time.Duration(vals[1]) * time.Microsecond
		s.allP99 = time.Duration(vals[2]) * time.Microsecond
		s.missing, s.errors, s.achieved = int64(vals[3]), int64(vals[4]), vals[5]
		s.served = s.allP99 > 0 && loadgen.Served(s.allP99, limit, s.missing, s.errors, s.achieved, s.rate)
		// Optional: a latency.csv from before herald-bench read the
		// cgroups has none of these, and its steps read zero.
		var cg [3]int64
		for i, h := range []string{"server_cgroup_periods", "server_cgroup_throttled", "server_cgroup_throttled_us"} {
			if j, ok := col[h]; ok {
				if cg[i], err = strconv.ParseInt(row[j], 10, 64); err != nil {
					return nil, fmt.Errorf("%s: %w", h, err)
				}
			}
		}
		s.periods, s.throttled, s.waited = cg[0], cg[1], time.Duration(cg[2])*time.Microsecond
		out = append(out, s)
	}
	return out, nil
}

// servedRate is the highest rate of the upward steps such that it and
// every lower one were served.
func servedRate(steps []step) float64 {
	up := make([]step, 0, len(steps))
	for _, s := range steps {
		if s.direction != "down" {
			up = append(up, s)
		}
	}
	sort.SliceStable(up, func(i, j int) bool { return up[i].rate < up[j].rate })
	best := 0.0
	for _, s := range up {
		if !s.served {
			break
		}
		best = s.rate
	}
	return best
}

// median of vs (the mean of the middle two for an even count).
func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// order sorts known names first, in the script's order, then the rest.
func order(names map[string]bool, known ...string) []string {
	var out []string
	for _, k := range known {
		if names[k] {
			out = append(out, k)
		}
	}
	var rest []string
	for n := range names {
		if !slices.Contains(known, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// floorServer is the server name of bench/floor's points. The floor has
// no engine (its points are labelled engine "none"), so it gets a column
// of its own per condition instead of a value in every engine's column;
// two floors relaying through Redis (engine "redis") get columns of their
// own too, which the Redis columns are held against (floorOf).
const floorServer = "floor"

// column is one engine and condition of the table, or a floor's column
// of a condition (engine: the floor's, floorOne or "redis").
type column struct {
	engine, condition string
	floor             bool
	// interval, in a floor column, keeps the points of one round
	// interval (floor.go); "" keeps them all.
	interval string
}

func (c column) title() string {
	engine := map[string]string{
		"memory": "memory", "redis": "Redis 2 nodes", "postgres": "PostgreSQL 2 nodes",
		"redis" + oneNodeSuffix: "Redis 1 node", "postgres" + oneNodeSuffix: "PostgreSQL 1 node",
	}[c.engine]
	if engine == "" {
		engine = c.engine
	}
	if c.floor {
		engine = "floor"
		if c.engine == "redis" {
			engine = "floor, Redis 2 nodes"
		}
	}
	switch c.condition {
	case "plain":
		return engine
	case "quota":
		return engine + ", 1-CPU quota"
	case "busy":
		return engine + ", busy neighbour"
	}
	return engine + ", " + c.condition
}

// servers are the servers of c's cells: the floor alone in its columns,
// srv in the others.
func (c column) servers(srv []string) []string {
	if c.floor {
		return []string{floorServer}
	}
	return srv
}

// has reports whether p is a point of server in column c.
func (c column) has(p point, server string) bool {
	if c.floor {
		return p.Server == floorServer && p.floorEngine() == c.engine && p.Condition == c.condition &&
			(c.interval == "" || p.interval() == c.interval)
	}
	return p.Server == server && p.Engine == c.engine && p.Condition == c.condition
}

// layout is what the table and the chart share: the servers (Herald
// first), the columns (every engine's conditions, then the floor's), the
// rates of the upward steps, and how many runs the points come from.
type layout struct {
	servers []string
	cols    []column
	rates   []float64
	runs    int
	floor   bool // the run has points of the floor
	// floorRedis: the run has points of two floors relaying through Redis.
	floorRedis bool
}

func layoutOf(points []point) layout {
	engines, conditions, servers := map[string]bool{}, map[string]bool{}, map[string]bool{}
	floorEngines, floorConditions := map[string]bool{}, map[string]bool{}
	rates := map[float64]bool{}
	runs := map[int]bool{}
	for _, p := range points {
		conditions[p.Condition], runs[p.Run] = true, true
		if p.Server == floorServer {
			floorEngines[p.floorEngine()], floorConditions[p.Condition] = true, true
		} else {
			engines[p.Engine], servers[p.Server] = true, true
		}
		for _, s := range p.steps {
			if s.direction != "down" {
				rates[s.rate] = true
			}
		}
	}
	l := layout{servers: order(servers, "herald", "centrifugo"), runs: len(runs), floor: len(floorConditions) > 0,
		floorRedis: floorEngines["redis"]}
	for _, e := range order(engines, "memory", "redis", "postgres") {
		for _, c := range order(conditions, "plain", "quota", "busy") {
			l.cols = append(l.cols, column{engine: e, condition: c})
		}
	}
	for _, e := range order(floorEngines, floorOne, "redis") {
		for _, c := range order(floorConditions, "plain", "quota", "busy") {
			if hasFloor(points, e, c) {
				l.cols = append(l.cols, column{engine: e, condition: c, floor: true})
			}
		}
	}
	for r := range rates {
		l.rates = append(l.rates, r)
	}
	sort.Float64s(l.rates)
	return l
}

func writeTable(w io.Writer, points []point) error {
	l := layoutOf(points)
	var names []string
	for _, s := range l.servers {
		names = append(names, serverName(s))
	}
	fmt.Fprintf(w, "First-copy p99 in ms, %s; medians of %d run(s) (in brackets: how many runs reached the rate, when not all did; — none did).",
		strings.Join(names, " / "), l.runs)
	intervals := floorIntervals(points)
	if l.floor {
		fmt.Fprint(w, " The floor columns: bench/floor (one process on Herald's connection layer that only delivers: no engine, no hub) with the same probe in the same condition: a minimal server, not a lower bound.")
		if len(intervals) > 1 {
			fmt.Fprintf(w, " It ran round by round and coalescing at fixed intervals (round intervals %s; 0: round by round); each floor cell is the best interval's median, the interval in brackets.", strings.Join(intervals, ", "))
		} else if intervals[0] == "0" {
			fmt.Fprint(w, " Its two writers go round by round.")
		} else {
			fmt.Fprintf(w, " Its writers coalesce at a round interval of %s.", intervals[0])
		}
		if l.floorRedis {
			fmt.Fprint(w, " The columns \"floor, Redis 2 nodes\": two such processes relaying through the run's Redis (the API on one, which publishes into Redis; the subscribers on the other, which subscribes), the path of the servers' nodes in the Redis columns, which are held against them.")
		}
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprint(w, "| msg/s |")
	for _, c := range l.cols {
		fmt.Fprintf(w, " %s |", c.title())
	}
	fmt.Fprint(w, "\n|---|")
	for range l.cols {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, r := range l.rates {
		fmt.Fprintf(w, "| %s |", thousands(r))
		for _, c := range l.cols {
			if c.floor {
				v := "—"
				if f, ok := bestFloorP99(points, c, r); ok {
					v = floorCell(f, ms(f.v), len(intervals))
				}
				fmt.Fprintf(w, " %s |", v)
				continue
			}
			var cells []string
			for _, s := range c.servers(l.servers) {
				cells = append(cells, cell(p99s(points, c, s, r)))
			}
			fmt.Fprintf(w, " %s |", strings.Join(cells, " / "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| highest rate served |")
	for _, c := range l.cols {
		if c.floor {
			v := "—"
			if f, ok := bestFloorServed(points, c); ok {
				v = floorCell(f, thousands(f.v), len(intervals))
			}
			fmt.Fprintf(w, " %s |", v)
			continue
		}
		var cells []string
		for _, s := range c.servers(l.servers) {
			if v, ok := servedMedian(points, c, s); ok {
				cells = append(cells, thousands(v))
			} else {
				cells = append(cells, "—")
			}
		}
		fmt.Fprintf(w, " %s |", strings.Join(cells, " / "))
	}
	fmt.Fprintln(w)
	if slices.Contains(l.servers, "herald") && slices.Contains(l.servers, "centrifugo") {
		writeVerdict(w, points, l)
	}
	writeMachine(w, points)
	return nil
}

// p99s are the first-copy p99s in ms of server s's runs in column c that
// reached rate r, and n the number of its runs there.
func p99s(points []point, c column, s string, r float64) (vs []float64, n int) {
	for _, p := range points {
		if !c.has(p, s) {
			continue
		}
		n++
		for _, st := range p.steps {
			if st.direction != "down" && st.rate == r {
				vs = append(vs, float64(st.firstP99)/float64(time.Millisecond))
			}
		}
	}
	return vs, n
}

// servedMedian is the median over server s's runs in column c of the
// highest rate served (false: no run).
func servedMedian(points []point, c column, s string) (float64, bool) {
	var vs []float64
	for _, p := range points {
		if c.has(p, s) {
			vs = append(vs, p.servedRate)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	return median(vs), true
}

// writeMachine writes what the points' meta.json say of the machine in the
// second before each point, when they say it.
func writeMachine(w io.Writer, points []point) {
	var busy, steal []float64
	longest := time.Duration(0)
	for _, p := range points {
		if p.CPUBusyBefore == nil {
			continue
		}
		busy = append(busy, *p.CPUBusyBefore)
		if p.CPUStealBefore != nil {
			steal = append(steal, *p.CPUStealBefore)
		}
		if d, err := time.ParseDuration(p.SettledAfter); err == nil && d > longest {
			longest = d
		}
	}
	if len(busy) == 0 {
		return
	}
	pct := func(vs []float64) string {
		if len(vs) == 0 {
			return "unknown"
		}
		return fmt.Sprintf("%.1f–%.1f%%", 100*slices.Min(vs), 100*slices.Max(vs))
	}
	fmt.Fprintf(w, "\nThe machine in the second before each point: CPUs busy %s, stolen by the hypervisor %s; the longest wait for such a second %s.\n",
		pct(busy), pct(steal), longest)
}

// cell is the median of vs in ms, with how many of n runs reached it.
func cell(vs []float64, n int) string {
	if len(vs) == 0 {
		return "—"
	}
	s := ms(median(vs))
	if len(vs) < n {
		s += fmt.Sprintf(" (%d of %d)", len(vs), n)
	}
	return s
}

// ms prints a latency in ms with three significant figures at most.
func ms(v float64) string {
	switch {
	case v >= 100:
		return thousands(v)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// serverName is how the table and the chart name a server: its chart
// series' name (chart.go), which picks the series' look.
func serverName(s string) string {
	if n, ok := map[string]string{"herald": seriesHerald, "centrifugo": seriesCentrifugo, floorServer: seriesFloor}[s]; ok {
		return n
	}
	return s
}

// thousands rounds v and groups its digits by three with commas.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func writeCSV(w io.Writer, points []point) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"server", "engine", "condition", "run", "rate", "direction", "first_p99_ms", "all_p99_ms", "missing", "publish_errors", "achieved_rate", "served", "served_rate",
		"cgroup_periods", "cgroup_throttled", "cgroup_throttled_ms"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, p := range points {
		for _, s := range p.steps {
			_ = cw.Write([]string{p.Server, p.Engine, p.Condition, strconv.Itoa(p.Run), f(s.rate), s.direction,
				f(float64(s.firstP99) / float64(time.Millisecond)), f(float64(s.allP99) / float64(time.Millisecond)),
				strconv.FormatInt(s.missing, 10), strconv.FormatInt(s.errors, 10), f(s.achieved), strconv.FormatBool(s.served), f(p.servedRate),
				strconv.FormatInt(s.periods, 10), strconv.FormatInt(s.throttled, 10), f(float64(s.waited) / float64(time.Millisecond))})
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeFile(path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
