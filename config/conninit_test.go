package config

import (
	"strings"
	"testing"
)

// Centrifugo's init section imports as it is, and its path takes part in
// the collision check of the main listener's endpoints.
func TestCentrifugoConnInit(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{"init": {"enabled": true, "handler_prefix": "/conn/init"}}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Init != (InitConfig{Enabled: true, HandlerPrefix: "/conn/init"}) || cfg.Paths().Init != "/conn/init" {
		t.Errorf("init: %+v", cfg.Init)
	}
	cfg.Init.HandlerPrefix = "/connection/websocket"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "init.handler_prefix") {
		t.Errorf("want a collision with init.handler_prefix, got %v", err)
	}
}
