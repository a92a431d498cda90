package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/docmarker"
	"github.com/heraldhq/herald/internal/test/golden"
)

// TestMetricsDocumented: the metrics tables of the docs (metricsDocs) are
// what the nodes started here register, rendered (metricstable_test.go),
// and every herald_ metric of those nodes is in one of them. The nodes
// cover every engine and the features whose metrics are registered only
// when configured. The rows come from the collectors' descriptions, so a
// metric that has no series yet (a vector nobody has used) counts too.
// With -update (go generate ./server) the tables are rewritten.
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
	rows := map[string]metricRow{}
	started := 0 // setups whose node started (one skips without its service)
	for setup, configure := range setups {
		t.Run(setup, func(t *testing.T) {
			cfg := config.Default()
			configure(t, &cfg)
			s := startServer(t, cfg)
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			started++
			families, err := s.registry.Gather()
			if err != nil {
				t.Fatal(err)
			}
			described, err := metricRows(s.collectors, families)
			if err != nil {
				t.Fatal(err)
			}
			if err := mergeMetricRows(rows, described); err != nil {
				t.Fatal(err)
			}
			for _, r := range described {
				registered[r.name] = setup
			}
		})
	}
	if t.Failed() {
		return // a node's metrics are missing: the tables would differ for that alone
	}
	if len(registered) == 0 {
		t.Fatal("no node started")
	}
	// The tables can be rendered only from every setup's metrics: without
	// a service, one missing metric could not be told from a skipped setup.
	if started < len(setups) {
		if golden.Updating() {
			t.Fatal("-update needs every setup (PostgreSQL, Redis and NATS)")
		}
		t.Log("a setup was skipped (no Redis, NATS or PostgreSQL): the tables are not checked against the nodes")
		return
	}
	rendered := map[string]bool{}
	for _, doc := range metricsDocs {
		golden.Check(t, filepath.Join("..", "docs", doc), "go generate ./server", func(old []byte) ([]byte, error) {
			s, err := docmarker.Rewrite(string(old), "metrics-table", func(spec string) (string, error) {
				return renderMetricsTable(rows, spec, rendered)
			})
			return []byte(s), err
		})
	}
	for name, setup := range registered {
		if !rendered[name] {
			t.Errorf("%s (registered with %s) is in no metrics table of %v", name, setup, metricsDocs)
		}
	}
}

// metricsDocs are the docs with metrics tables.
var metricsDocs = []string{"operations.md", "proxy.md", "consumers.md"}
