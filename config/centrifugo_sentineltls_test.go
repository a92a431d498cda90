package config

import (
	"strings"
	"testing"
)

// sentinel_tls is taken when it is the TLS of the servers, which Herald's
// Redis client also dials the Sentinels with, and refused otherwise.
func TestCentrifugoSentinelTLS(t *testing.T) {
	const tls = `{"enabled": true, "server_ca_pem": "/etc/ca.pem", "server_name": "redis.internal"}`
	file := func(sentinelTLS string) []byte {
		return []byte(`{"engine": {"type": "redis", "redis": {"sentinel_address": ["s1:26379"], "sentinel_master_name": "mymaster",
			"tls": ` + tls + `, "sentinel_tls": ` + sentinelTLS + `}}}`)
	}
	cfg, err := ParseCentrifugo(file(tls), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Engine.Redis; !r.TLS.Enabled || r.TLS.CAFile != "/etc/ca.pem" || r.SentinelMaster != "mymaster" {
		t.Errorf("engine.redis: %+v", r)
	}
	if _, err := ParseCentrifugo(file(`{"enabled": false}`), "c.json", nil); err != nil {
		t.Errorf("sentinel_tls off: %v", err)
	}
	for _, other := range []string{
		`{"enabled": true, "server_ca_pem": "/etc/other.pem", "server_name": "redis.internal"}`,
		`{"enabled": true}`,
	} {
		_, err := ParseCentrifugo(file(other), "c.json", nil)
		if err == nil || !strings.Contains(err.Error(), "engine.redis.sentinel_tls: Herald dials the Sentinels with engine.redis.tls") {
			t.Errorf("%s: %v", other, err)
		}
	}
}
