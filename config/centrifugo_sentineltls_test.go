package config

import (
	"testing"

	"github.com/heraldhq/herald/engine/redis"
)

// sentinel_tls is the Sentinels' TLS apart from the servers', as in
// Centrifugo: without it (or off), the Sentinels take no TLS even when
// the servers do. The same from JSON, YAML and TOML, and under broker.
func TestCentrifugoSentinelTLS(t *testing.T) {
	const tls = `{"enabled": true, "server_name": "redis.internal"}`
	const own = `{"enabled": true, "server_ca_pem": "/etc/sentinel-ca.pem", "server_name": "sentinel.internal"}`
	engine := func(body string) string {
		return `{"engine": {"type": "redis", "redis": {"sentinel_address": ["s1:26379,s2:26379"], "sentinel_master_name": "mymaster"` + body + `}}}`
	}
	type want struct {
		serversTLS, plain, ownTLS bool
		ca                        string
	}
	cases := map[string]struct {
		name, text string
		want       want
	}{
		"tls, no sentinel_tls":  {"c.json", engine(`, "tls": ` + tls), want{serversTLS: true, plain: true}},
		"tls, sentinel_tls off": {"c.json", engine(`, "tls": ` + tls + `, "sentinel_tls": {"enabled": false}`), want{serversTLS: true, plain: true}},
		"tls and sentinel_tls":  {"c.json", engine(`, "tls": ` + tls + `, "sentinel_tls": ` + own), want{serversTLS: true, ownTLS: true, ca: "/etc/sentinel-ca.pem"}},
		"sentinel_tls alone":    {"c.json", engine(`, "sentinel_tls": ` + own), want{ownTLS: true, ca: "/etc/sentinel-ca.pem"}},
		"neither":               {"c.json", engine(``), want{}},
		"broker.redis": {"c.json", `{"broker": {"enabled": true, "type": "redis", "redis": {"sentinel_address": ["s1:26379"], "sentinel_master_name": "mymaster", "tls": ` + tls + `}}}`,
			want{serversTLS: true, plain: true}},
		"yaml": {"c.yaml", "engine:\n  type: redis\n  redis:\n    sentinel_address: [\"s1:26379\"]\n    sentinel_master_name: mymaster\n    tls: {enabled: true}\n" +
			"    sentinel_tls: {enabled: true, server_ca_pem: /etc/sentinel-ca.pem}\n", want{serversTLS: true, ownTLS: true, ca: "/etc/sentinel-ca.pem"}},
		"toml": {"c.toml", "[engine]\ntype = \"redis\"\n[engine.redis]\nsentinel_address = [\"s1:26379\"]\nsentinel_master_name = \"mymaster\"\n[engine.redis.tls]\nenabled = true\n",
			want{serversTLS: true, plain: true}},
	}
	for name, tc := range cases {
		cfg, err := ParseCentrifugo([]byte(tc.text), tc.name, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		r := cfg.Engine.Redis
		got := want{serversTLS: r.TLS.Enabled, plain: r.SentinelTLS.Plain, ownTLS: r.SentinelTLS.Enabled, ca: r.SentinelTLS.CAFile}
		if got != tc.want || r.SentinelMaster != "mymaster" {
			t.Errorf("%s: engine.redis %+v, want %+v", name, r, tc.want)
		}
	}
}

// The engine gets the Sentinels apart from the servers exactly when the
// file says so: plain gives no Sentinel TLS, an enabled section its own,
// neither the servers' (Herald's default).
func TestSentinelTLSStores(t *testing.T) {
	for _, tc := range []struct {
		s                SentinelTLSConfig
		separate, hasTLS bool
	}{
		{SentinelTLSConfig{}, false, false},
		{SentinelTLSConfig{Plain: true}, true, false},
		{SentinelTLSConfig{ClientTLS: ClientTLS{Enabled: true}}, true, true},
	} {
		r := RedisConfig{Addresses: []string{"s1:26379"}, SentinelTLS: tc.s}
		r.SentinelMaster = "m"
		r.TLS.Enabled = true
		stores, err := r.stores()
		if err != nil {
			t.Fatal(err)
		}
		c := stores[0].(redis.Config)
		if c.TLS == nil || c.SeparateSentinelTLS != tc.separate || (c.SentinelTLS != nil) != tc.hasTLS {
			t.Errorf("%+v: engine config TLS %v, separate %v, Sentinel TLS %v", tc.s, c.TLS != nil, c.SeparateSentinelTLS, c.SentinelTLS != nil)
		}
	}
	if ps := (SentinelTLSConfig{Plain: true, ClientTLS: ClientTLS{Enabled: true}}).problems(); len(ps) != 1 || ps[0].Key != "engine.redis.sentinel_tls.plain" {
		t.Errorf("plain with enabled: %v", ps)
	}
}
