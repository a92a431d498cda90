package config

import (
	"strings"
	"testing"
)

// TestMapNamespacesNeedMapEngine checks that `herald config check`
// refuses map namespaces on an engine that keeps no map state, naming the
// key, and accepts them on the memory engine.
func TestMapNamespacesNeedMapEngine(t *testing.T) {
	const channels = `
channel:
  namespaces:
    - {name: cursors, subscription_type: map, map: {mode: ephemeral, key_ttl: 60s, allow_publish_for_subscriber: true}}
`
	cfg, err := Parse([]byte("engine: {type: nats}" + channels))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	want := `channel.namespaces[0].subscription_type: engine "nats" keeps no map state`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("problems:\n%v\nwant one containing %s", err, want)
	}
	cfg, err = Parse([]byte("engine: {type: memory}" + channels))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("map namespace on the memory engine: %v", err)
	}
	cfg.Channel.Namespaces[0].Map.KeyTTL = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "channel.namespaces[0].map.key_ttl: the ephemeral mode needs a positive key_ttl") {
		t.Fatalf("ephemeral map without key_ttl: %v", err)
	}
}
