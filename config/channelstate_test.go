package config

import (
	"strings"
	"testing"
)

// TestChannelStateChecks: `herald config check` refuses state events on
// an engine that keeps no occupancy and without a state proxy, naming
// the keys, and takes them on Redis with one; Herald's keys become the
// proxy router's.
func TestChannelStateChecks(t *testing.T) {
	const ns = `
channel:
  namespaces: [{name: chat, state_proxy_enabled: true}]
`
	const withProxy = `
proxies: [{name: state, endpoint: 'http://localhost:3000/state'}]
channel:
  state_proxy: state
  namespaces: [{name: chat, state_proxy_enabled: true}]
`
	for _, c := range []struct {
		file, want string
	}{
		{"engine: {type: nats}" + withProxy, `channel.namespaces[0].state_proxy_enabled: engine "nats" keeps no channel occupancy`},
		{"engine: {type: memory}" + ns, `channel.namespaces[0].state_proxy_enabled: needs channel.state_proxy`},
		{"engine: {type: memory}\nchannel: {state_proxy: nope}", `channel.state_proxy: unknown proxy "nope"`},
		{"engine: {type: memory}\nchannel: {state: {node_ttl: 1s}}", `channel.state.node_ttl`},
	} {
		cfg, err := Parse([]byte(c.file))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\nproblems:\n%v\nwant one containing %s", c.file, err, c.want)
		}
	}
	cfg, err := Parse([]byte("engine: {type: redis, redis: {address: 'localhost:6379'}}" + withProxy))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("refused: %v", err)
	}
	if opts, used := cfg.ProxyOptions(); !used || opts.ChannelState != "state" {
		t.Errorf("proxy options: used %v, channel state %q", used, opts.ChannelState)
	}
}
