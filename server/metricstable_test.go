package server

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The metric tables of the docs are produced from the collectors a node
// registers: each metric's name, type, variable labels and meaning (its
// Help) are defined once, where the metric is made, and the tables between
// "<!-- metrics-table: SPEC -->" and "<!-- end metrics-table -->" are
// rendered from them (TestMetricsDocumented checks them, -update writes
// them).

// metricRow is one herald_ metric as a node registers it; labels are
// the names of the labels its series carry.
type metricRow struct {
	name, typ, help string
	labels          []string
}

// descParts picks a Desc's String apart: the client library has no
// accessors for its fields. Name and help are Go-quoted.
var descParts = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"), unit: "(?:[^"\\]|\\.)*", constLabels: \{(.*)\}, variableLabels: \{([^}]*)\}\}$`)

// constLabelName picks the names out of a Desc's constant labels,
// name="value" pairs with Go-quoted values.
var constLabelName = regexp.MustCompile(`(\w+)="(?:[^"\\]|\\.)*"`)

// metricRows describes the herald_ metrics of cs. The type of a metric
// comes from families (what the registry gathered) where it has a series,
// else from the collector's own type (a vector nobody has used yet has no
// series).
func metricRows(cs []prometheus.Collector, families []*dto.MetricFamily) ([]metricRow, error) {
	types := map[string]string{}
	for _, f := range families {
		types[f.GetName()] = strings.ToLower(f.GetType().String())
	}
	var rows []metricRow
	for _, c := range cs {
		kind := ""
		switch c.(type) {
		case *prometheus.CounterVec:
			kind = "counter"
		case *prometheus.GaugeVec:
			kind = "gauge"
		case *prometheus.HistogramVec:
			kind = "histogram"
		case *prometheus.SummaryVec:
			kind = "summary"
		}
		for _, d := range describe(c) {
			m := descParts.FindStringSubmatch(d.String())
			if m == nil {
				return nil, fmt.Errorf("cannot read the description %s", d)
			}
			name, err1 := strconv.Unquote(m[1])
			help, err2 := strconv.Unquote(m[2])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("cannot read the description %s", d)
			}
			if !strings.HasPrefix(name, "herald_") {
				continue
			}
			typ := types[name]
			if typ == "" {
				typ = kind
			}
			if typ == "" {
				return nil, fmt.Errorf("%s: no series and a collector of type %T: its type is unknown", name, c)
			}
			// The labels each series carries: those that vary, then the
			// constant ones (the node's name, a token's).
			var labels []string
			for l := range strings.SplitSeq(m[4], ",") {
				if l != "" {
					labels = append(labels, l)
				}
			}
			for _, c := range constLabelName.FindAllStringSubmatch(m[3], -1) {
				labels = append(labels, c[1])
			}
			rows = append(rows, metricRow{name: name, typ: typ, help: help, labels: labels})
		}
	}
	return rows, nil
}

func describe(c prometheus.Collector) []*prometheus.Desc {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	var ds []*prometheus.Desc
	for d := range ch {
		ds = append(ds, d)
	}
	return ds
}

// mergeMetricRows joins the rows of several nodes; a metric that two of
// them describe differently is an error.
func mergeMetricRows(into map[string]metricRow, rows []metricRow) error {
	for _, r := range rows {
		if old, ok := into[r.name]; ok && (old.typ != r.typ || old.help != r.help || !slices.Equal(old.labels, r.labels)) {
			return fmt.Errorf("%s is described in two ways: %+v and %+v", r.name, old, r)
		}
		into[r.name] = r
	}
	return nil
}

// renderMetricsTable renders the rows a marker's spec selects, by name: a
// spec is name prefixes, each with "-" in front excluded ("herald_
// -herald_redis_": every herald_ metric but Redis's). Each rendered name
// is added to rendered.
func renderMetricsTable(rows map[string]metricRow, spec string, rendered map[string]bool) (string, error) {
	var include, exclude []string
	for f := range strings.FieldsSeq(spec) {
		if p, ok := strings.CutPrefix(f, "-"); ok {
			exclude = append(exclude, p)
		} else {
			include = append(include, f)
		}
	}
	hasPrefix := func(name string, ps []string) bool {
		return slices.ContainsFunc(ps, func(p string) bool { return strings.HasPrefix(name, p) })
	}
	var names []string
	for name := range rows {
		if hasPrefix(name, include) && !hasPrefix(name, exclude) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "", fmt.Errorf("no metric matches %q", spec)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("| metric | type | labels | meaning |\n|---|---|---|---|\n")
	for _, name := range names {
		r := rows[name]
		labels := make([]string, len(r.labels))
		for i, l := range r.labels {
			labels[i] = "`" + l + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", name, r.typ, strings.Join(labels, ", "), strings.ReplaceAll(r.help, "|", `\|`))
		rendered[name] = true
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// TestMetricRowsAndTable: the rows read from collectors carry each
// metric's type (from its series, or from its vector when it has none),
// help and labels, variable then constant; a table renders the rows its
// spec selects, sorted, with "|" escaped; a spec that selects nothing is
// an error. It needs no service, unlike TestMetricsDocumented.
func TestMetricRowsAndTable(t *testing.T) {
	unused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_t_unused_total", Help: `Calls by "result" | kind.`, ConstLabels: prometheus.Labels{"node": "n1"},
	}, []string{"result"})
	gauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "herald_t_depth", Help: "Depth."}, func() float64 { return 1 })
	hist := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "herald_x_seconds", Help: "Time."})
	other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "go_t_other", Help: "Not ours."})
	cs := []prometheus.Collector{unused, gauge, hist, other}
	r := prometheus.NewRegistry()
	r.MustRegister(cs...)
	families, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got, err := metricRows(cs, families)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]metricRow{}
	if err := mergeMetricRows(rows, got); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("got %d rows, want the 3 herald_ metrics: %+v", len(rows), rows)
	}
	u := rows["herald_t_unused_total"]
	if u.typ != "counter" || u.help != `Calls by "result" | kind.` || strings.Join(u.labels, ",") != "result,node" {
		t.Errorf("vector without series: %+v", u)
	}
	if d := rows["herald_t_depth"]; d.typ != "gauge" || len(d.labels) != 0 {
		t.Errorf("gauge func: %+v", d)
	}
	if h := rows["herald_x_seconds"]; h.typ != "histogram" {
		t.Errorf("histogram: %+v", h)
	}

	rendered := map[string]bool{}
	table, err := renderMetricsTable(rows, "herald_ -herald_x_", rendered)
	if err != nil {
		t.Fatal(err)
	}
	want := "| metric | type | labels | meaning |\n|---|---|---|---|\n" +
		"| `herald_t_depth` | gauge |  | Depth. |\n" +
		"| `herald_t_unused_total` | counter | `result`, `node` | Calls by \"result\" \\| kind. |"
	if table != want {
		t.Errorf("table:\n%s\nwant:\n%s", table, want)
	}
	if !rendered["herald_t_depth"] || rendered["herald_x_seconds"] {
		t.Errorf("rendered: %v", rendered)
	}
	if _, err := renderMetricsTable(rows, "herald_none_", rendered); err == nil {
		t.Error("a spec that selects nothing rendered a table")
	}

	changed := u
	changed.help = "Another meaning."
	if err := mergeMetricRows(rows, []metricRow{changed}); err == nil {
		t.Error("a metric described in two ways was merged")
	}
}
