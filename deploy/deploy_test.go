package deploy_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	gws "github.com/gorilla/websocket"
	"go.uber.org/goleak"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/servertest"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/server"
	"github.com/heraldhq/herald/transport/websocket"
)

// TestMain fails the run if any goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testenv.ProcessGoroutines()...)
}

// metricRef finds metric names in PromQL: Herald's own and the Go and
// process collectors' a node also exposes.
var metricRef = regexp.MustCompile(`\b(?:herald|go|process)_[a-z0-9_]+\b`)

// exposedMetrics starts a node on the memory engine, drives one client
// through an error and a disconnect (metrics with labels appear once a
// label value is used), and returns every series name its /metrics
// exposes, histograms' _bucket, _sum and _count included.
func exposedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	cfg := config.Default()
	cfg.Address = "127.0.0.1:0"
	cfg.Client.Insecure = true
	cfg.WebSocket.Poller = websocket.Poller(testenv.WebSocketPoller())
	cfg.Shutdown.DrainWindow = time.Duration(10 * time.Millisecond)
	s := servertest.Start(t, cfg)
	conn, _, err := gws.DefaultDialer.Dial("ws://"+s.Addr()+server.WebSocketPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for _, cmd := range []string{`{"id":1,"connect":{}}`, `{"id":2,"subscribe":{"channel":"nosuchns:x"}}`} {
		if err := conn.WriteMessage(gws.TextMessage, []byte(cmd)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := conn.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()

	var names map[string]bool
	testenv.Eventually(t, "the disconnect counted", 10*time.Second, func() bool {
		names = scrape(t, "http://"+s.Addr()+"/metrics")
		return names["herald_client_disconnects_total"] && names["herald_client_errors_total"]
	})
	return names
}

// scrape reads the metric families of a Prometheus text exposition.
func scrape(t *testing.T, url string) map[string]bool {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	names := make(map[string]bool)
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		names[f[2]] = true
		switch f[3] {
		case "histogram":
			names[f[2]+"_bucket"], names[f[2]+"_sum"], names[f[2]+"_count"] = true, true, true
		case "summary":
			names[f[2]+"_sum"], names[f[2]+"_count"] = true, true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// checkQuery reports the metric names in expr that no node exposes, and
// unbalanced brackets.
func checkQuery(t *testing.T, where, expr string, exposed map[string]bool, used map[string]bool) {
	t.Helper()
	refs := metricRef.FindAllString(expr, -1)
	if len(refs) == 0 && !strings.Contains(expr, "up{") {
		t.Errorf("%s: query names no metric: %s", where, expr)
	}
	for _, m := range refs {
		used[m] = true
		if !exposed[m] {
			t.Errorf("%s: metric %s is not exposed by Herald (query %s)", where, m, expr)
		}
	}
	depth := map[rune]int{}
	pairs := map[rune]rune{')': '(', '}': '{', ']': '['}
	for _, r := range expr {
		switch r {
		case '(', '{', '[':
			depth[r]++
		case ')', '}', ']':
			depth[pairs[r]]--
		}
	}
	for r, d := range depth {
		if d != 0 {
			t.Errorf("%s: unbalanced %q in %s", where, r, expr)
		}
	}
}

func TestGrafanaDashboard(t *testing.T) {
	exposed := exposedMetrics(t)
	data, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string
		UID    string
		Panels []struct {
			ID      int
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct {
				Name       string
				Definition string
			}
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) < 10 {
		t.Fatalf("dashboard: title %q, uid %q, %d panels", dash.Title, dash.UID, len(dash.Panels))
	}
	used := make(map[string]bool)
	ids := make(map[int]bool)
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: duplicate id %d", p.Title, p.ID)
		}
		ids[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			checkQuery(t, "panel "+p.Title, tg.Expr, exposed, used)
		}
	}
	for _, v := range dash.Templating.List {
		if v.Definition != "" {
			checkQuery(t, "variable "+v.Name, v.Definition, exposed, used)
		}
	}
	// Every gauge a node has about its clients and channels is on it.
	for _, m := range []string{"herald_client_connections", "herald_client_subscriptions", "herald_channels", "herald_cluster_nodes",
		"herald_client_commands_total", "herald_engine_publish_duration_seconds_bucket", "herald_engine_delivery_lag_seconds_bucket"} {
		if !used[m] {
			t.Errorf("the dashboard does not show %s", m)
		}
	}
}

// alertRules is the rules file's shape, as Prometheus reads it.
type alertRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func TestPrometheusAlerts(t *testing.T) {
	exposed := exposedMetrics(t)
	data, err := os.ReadFile("prometheus-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules alertRules
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&rules); err != nil {
		t.Fatalf("prometheus-alerts.yml: %v", err)
	}
	if len(rules.Groups) == 0 {
		t.Fatal("no rule groups")
	}
	// Annotations are Go templates with Prometheus' functions; these are
	// the ones the file may use.
	funcs := template.FuncMap{}
	for _, f := range []string{"humanize", "humanize1024", "humanizeDuration", "humanizePercentage", "printf", "title", "toUpper", "toLower"} {
		funcs[f] = func(...any) string { return "" }
	}
	used := make(map[string]bool)
	var names []string
	for _, g := range rules.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q: needs a name and rules", g.Name)
		}
		for _, r := range g.Rules {
			if (r.Alert == "") == (r.Record == "") {
				t.Errorf("rule %q%q: exactly one of alert and record", r.Alert, r.Record)
				continue
			}
			names = append(names, r.Alert)
			checkQuery(t, "alert "+r.Alert, r.Expr, exposed, used)
			if r.For != "" {
				if d, err := time.ParseDuration(r.For); err != nil || d <= 0 {
					t.Errorf("alert %s: for %q: want a duration such as 5m", r.Alert, r.For)
				}
			}
			if r.Alert != "" && (r.Labels["severity"] == "" || r.Annotations["summary"] == "") {
				t.Errorf("alert %s: needs a severity label and a summary annotation", r.Alert)
			}
			for k, v := range r.Annotations {
				if _, err := template.New(k).Funcs(funcs).Parse("{{$labels := .Labels}}{{$value := .Value}}" + v); err != nil {
					t.Errorf("alert %s: annotation %s: %v", r.Alert, k, err)
				}
			}
		}
	}
	if uniq := slices.Compact(slices.Sorted(slices.Values(names))); len(uniq) != len(names) || len(uniq) < 5 {
		t.Errorf("alerts %v: want at least 5, each named once", names)
	}
	// promtool checks the rules for real where it is installed.
	if promtool, err := exec.LookPath("promtool"); err == nil {
		out, err := exec.Command(promtool, "check", "rules", "prometheus-alerts.yml").CombinedOutput()
		if err != nil {
			t.Fatalf("promtool check rules: %v\n%s", err, out)
		}
	} else {
		t.Log("promtool not installed: structural check only")
	}
}
