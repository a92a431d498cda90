package config

import (
	"strings"
	"testing"
)

// TestCentrifugoBrokerAndPresenceManager: Centrifugo's broker and
// presence_manager, when enabled, choose the engine and where presence is
// kept, each with its own section; disabled, they change nothing.
func TestCentrifugoBrokerAndPresenceManager(t *testing.T) {
	for _, c := range []struct {
		name, file              string
		engine, presence, redis string
		natsURL                 string
	}{
		{"disabled", `{"engine": {"type": "redis", "redis": {"address": "r:1"}}, "broker": {"enabled": false, "type": "nats"}}`, "redis", "", "r:1", ""},
		{"nats broker, redis presence", `{"broker": {"enabled": true, "type": "nats", "nats": {"url": "nats://n:4222", "prefix": "p"}},
			"presence_manager": {"enabled": true, "type": "redis", "redis": {"address": "r:2"}}}`, "nats", "redis", "r:2", "nats://n:4222"},
		{"nats broker, presence from a redis engine", `{"engine": {"type": "redis", "redis": {"address": "r:3"}}, "broker": {"enabled": true, "type": "nats"}}`, "nats", "redis", "r:3", ""},
		{"redis broker, memory presence", `{"broker": {"enabled": true, "type": "redis", "redis": {"address": "r:4"}}, "presence_manager": {"enabled": true, "type": "memory"}}`, "redis", "", "r:4", ""},
		{"one redis for both", `{"engine": {"type": "redis", "redis": {"address": "r:5"}}, "broker": {"enabled": true, "type": "redis", "redis": {"address": "r:5"}}}`, "redis", "", "r:5", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseCentrifugo([]byte(c.file), "c.json", nil)
			if err == nil {
				err = cfg.Validate()
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Engine.Type != c.engine || cfg.Engine.Presence != c.presence {
				t.Errorf("engine %q presence %q, want %q %q", cfg.Engine.Type, cfg.Engine.Presence, c.engine, c.presence)
			}
			if got := cfg.Engine.Redis.Addrs()[0]; got != c.redis {
				t.Errorf("redis %q, want %q", got, c.redis)
			}
			if c.natsURL != "" && (cfg.Engine.NATS.URL != c.natsURL || cfg.Engine.NATS.Prefix != "p") {
				t.Errorf("nats %+v", cfg.Engine.NATS.Config)
			}
		})
	}
	for _, c := range []struct{ file, want string }{
		{`{"engine": {"type": "redis", "redis": {"address": "r:1"}}, "broker": {"enabled": true, "type": "redis", "redis": {"address": "r:2"}}}`, "engine.redis: Herald keeps the broker and presence in one Redis deployment: make it the same as broker.redis"},
		{`{"broker": {"enabled": true, "type": "kafka"}}`, `broker.type: "kafka"`},
		{`{"broker": {"enabled": true, "type": "nats", "nats": {"raw_mode": {"enabled": true}}}}`, "broker.nats.raw_mode.enabled"},
	} {
		if _, err := ParseCentrifugo([]byte(c.file), "c.json", nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
}

// TestCentrifugoGlobalAllowedDeltaTypes: an older Centrifugo's global
// client.allowed_delta_types applies to every namespace that sets none.
func TestCentrifugoGlobalAllowedDeltaTypes(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{"client": {"allowed_delta_types": ["fossil"]},
		"channel": {"namespaces": [{"name": "a"}, {"name": "b", "allowed_delta_types": []}]}}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Channel.WithoutNamespace.AllowedDeltaTypes; len(got) != 1 || got[0] != "fossil" {
		t.Errorf("without_namespace: %v", got)
	}
	if a, b := cfg.Channel.Namespaces[0].AllowedDeltaTypes, cfg.Channel.Namespaces[1].AllowedDeltaTypes; len(a) != 1 || len(b) != 0 {
		t.Errorf("namespaces: %v, %v; want the global value where none is set", a, b)
	}
}
