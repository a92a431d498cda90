package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/bench/loadgen"
)

func TestAttacksFlags(t *testing.T) {
	out, err := run(t, "--help")
	if err != nil || !strings.Contains(out, "attacks") {
		t.Fatalf("herald-bench --help lacks attacks (%v):\n%s", err, out)
	}
	out, err = run(t, "attacks", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"--attack", "--server-pid", "--grpc", "--grpc-streams", "--clients", "--map-value", "--concurrency", "--latency-limit", "--rss-growth-limit", "--report"} {
		if !strings.Contains(out, f) {
			t.Errorf("herald-bench attacks --help lacks %s", f)
		}
	}
	for args, want := range map[string]string{
		"--attack nope --server-pid 1":                                     `--attack "nope": want one of grpc-partial, noread`,
		"--attack noread --channel c":                                      "give --server-pid",
		"--attack grpc-partial --server-pid 1":                             "--attack grpc-partial: give --grpc",
		"--attack history-grpc --server-pid 1 --channel c":                 "--attack history-grpc: give --grpc",
		"--attack mapkeys --server-pid 1":                                  "--attack mapkeys: give --channel",
		"--attack noread --server-pid 1 --channel c --format xml":          `--format "xml"`,
		"--attack noread --server-pid 1 --channel c --duration 0":          "must be positive",
		"--attack noread --server-pid 1 --channel c --rss-growth-limit -1": "--rss-growth-limit -1",
	} {
		if _, err := run(t, append([]string{"attacks"}, strings.Fields(args)...)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("attacks %s: want an error containing %q, got %v", args, want, err)
		}
	}
}

// TestAttacksConfig: the flags reach the attack's configuration, the API
// URL loses its slash and the metrics come from --url's host.
func TestAttacksConfig(t *testing.T) {
	cmd := &cobra.Command{Use: "attacks"}
	var f attackFlags
	f.register(cmd)
	if err := cmd.Flags().Parse(strings.Fields("--attack noread --server-pid 42 --channel attack:recent --url ws://127.0.0.1:18201/connection/websocket --api http://127.0.0.1:18201/api/ --rss-growth-limit 64 --format protobuf --clients 7")); err != nil {
		t.Fatal(err)
	}
	c, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerPID != 42 || c.Clients != 7 || c.RSSGrowthLimit != 64<<20 || c.APIURL != "http://127.0.0.1:18201/api" ||
		c.Metrics != "http://127.0.0.1:18201/metrics" || c.LatencyLimit != 100*time.Millisecond || c.HistoryPull != 100 {
		t.Errorf("config %+v", c)
	}
	f.metrics = "-"
	if c, _ = f.config(); c.Metrics != "" {
		t.Errorf("--metrics -: metrics %q, want none", c.Metrics)
	}
}

func TestAttacksReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	var lines []byte
	for _, name := range []string{"grpc-partial", "noread-detached"} {
		b, err := json.Marshal(loadgen.AttackResult{Attack: name, Outcome: "done", Verdict: "pass", LatencyLimit: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(path, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "attacks", "--report", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| attack | RSS before", "| grpc-partial |", "| noread-detached |", "- noread-detached: done"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if _, err := run(t, "attacks", "--report", filepath.Join(t.TempDir(), "none.jsonl")); err == nil {
		t.Error("want an error for a missing report file")
	}
}
