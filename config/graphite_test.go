package config

import (
	"strings"
	"testing"
	"time"
)

func TestGraphiteProblems(t *testing.T) {
	cfg := Default()
	cfg.Graphite = GraphiteConfig{Enabled: true}
	err := cfg.Validate()
	for _, key := range []string{"graphite.host", "graphite.port", "graphite.interval"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("want a problem with %s, got %v", key, err)
		}
	}
}

// Centrifugo's graphite section imports as it is; prefix takes Herald's
// default when absent.
func TestCentrifugoGraphite(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{"graphite": {"enabled": true, "host": "g.example", "port": 2103, "interval": "30s", "tags": true}}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := GraphiteConfig{Enabled: true, Host: "g.example", Port: 2103, Prefix: "herald", Interval: 30 * time.Second, Tags: true}
	if cfg.Graphite != want {
		t.Errorf("graphite: %+v, want %+v", cfg.Graphite, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}
