package server

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/config"
)

// TestMetricsDocumented: docs/operations.md's table of metrics and the
// metrics a node registers agree. Every herald_ metric of the nodes
// started here is named in the docs, and every metric of the page's
// tables is registered by one of them, with the type the table gives
// (checked where a node exports a series of it). The names come from
// the collectors' descriptions, so a metric that has no series yet (a
// vector nobody has used) counts too.
func TestMetricsDocumented(t *testing.T) {
	// Memory with the features whose metrics are registered only when
	// configured, and every engine that connects nodes (networkedEngines),
	// each with an outbox consumer when the tests have a PostgreSQL.
	setups := map[string]func(*testing.T, *config.Config){
		"memory, proxy, JWKS, channel state": func(t *testing.T, c *config.Config) {
			parsed, err := config.Parse([]byte(`
proxies:
  - name: auth
    endpoint: http://127.0.0.1:1/connect
client:
  proxy:
    connect: auth
  token:
    jwks_public_endpoint: http://127.0.0.1:1/jwks
channel:
  state_proxy: auth
  namespaces:
    - {name: cs, state_proxy_enabled: true}
`))
			if err != nil {
				t.Fatal(err)
			}
			*c = parsed
		},
	}
	for name, engine := range networkedEngines() {
		setups[name] = func(t *testing.T, c *config.Config) {
			dsn := os.Getenv("HERALD_TEST_POSTGRES_DSN")
			if dsn == "" {
				engine(t, c)
				return
			}
			parsed, err := config.Parse([]byte(`
consumers:
  - name: outbox
    enabled: true
    type: postgresql
    postgresql:
      dsn: "` + dsn + `"
      outbox_table_name: herald_t_metricsdoc_outbox
`))
			if err != nil {
				t.Fatal(err)
			}
			*c = parsed
			engine(t, c)
		}
	}
	registered := map[string]string{} // metric -> the setup that registered it
	types := map[string]string{}      // metric -> its type, where it has a series
	started := 0                      // setups whose node started (one skips without its service)
	for setup, configure := range setups {
		t.Run(setup, func(t *testing.T) {
			cfg := config.Default()
			configure(t, &cfg)
			s := startServer(t, cfg)
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			started++
			for _, name := range collectorNames(s.collectors) {
				registered[name] = setup
			}
			families, err := s.registry.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range families {
				types[f.GetName()] = strings.ToLower(f.GetType().String())
			}
		})
	}
	if len(registered) == 0 {
		t.Fatal("no node started")
	}

	docs := readDocs(t)
	table := operationsMetrics(t)
	for name, setup := range registered {
		if !strings.Contains(docs, "`"+name) {
			t.Errorf("%s (registered with %s) is named in no docs/*.md", name, setup)
		}
	}
	// The table's metrics must exist; only when every setup ran can a
	// missing one be told from a skipped setup.
	if started < len(setups) {
		t.Log("a setup was skipped (no Redis, NATS or PostgreSQL): the table is not checked against the nodes")
		return
	}
	for name, typ := range table {
		if _, ok := registered[name]; !ok {
			t.Errorf("docs/operations.md lists %s, which no node registers", name)
		}
		if got, ok := types[name]; ok && got != typ {
			t.Errorf("docs/operations.md gives %s the type %q; the node exports it as %q", name, typ, got)
		}
	}
}

// descName picks the metric name out of a Desc's String: the client
// library has no accessor for it.
var descName = regexp.MustCompile(`fqName: "([^"]+)"`)

// collectorNames are the herald_ metric names cs describe.
func collectorNames(cs []prometheus.Collector) []string {
	ch := make(chan *prometheus.Desc)
	go func() {
		for _, c := range cs {
			c.Describe(ch)
		}
		close(ch)
	}()
	var names []string
	for d := range ch {
		if m := descName.FindStringSubmatch(d.String()); m != nil && strings.HasPrefix(m[1], "herald_") {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// readDocs is every docs/*.md, joined.
func readDocs(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob("../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs: %v (%d files)", err, len(files))
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// operationsMetrics are the herald_ metrics of the tables under
// docs/operations.md's "## Metrics", each with the type its second column
// gives: "`a{label}` / `b`" in the first column names a and b.
func operationsMetrics(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Metrics\n")
	if !ok {
		t.Fatal("docs/operations.md has no '## Metrics' section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	name := regexp.MustCompile("`(herald_[a-z_]+)")
	out := map[string]string{}
	for line := range strings.SplitSeq(section, "\n") {
		if !strings.HasPrefix(line, "| `herald_") {
			continue
		}
		cells := strings.Split(strings.TrimPrefix(line, "| "), " | ")
		if len(cells) < 3 {
			t.Fatalf("docs/operations.md: a metrics row without a type: %s", line)
		}
		for _, m := range name.FindAllStringSubmatch(cells[0], -1) {
			out[m[1]] = strings.TrimSpace(cells[1])
		}
	}
	if len(out) < 10 {
		t.Fatalf("found %d metrics in docs/operations.md's table: is it still a table?", len(out))
	}
	return out
}
