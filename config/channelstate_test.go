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

// TestCentrifugoChannelState: Centrifugo PRO's keys of channel state
// events become Herald's: the proxy, its name in channel.state_proxy, and
// the delay; num_partitions is dropped.
func TestCentrifugoChannelState(t *testing.T) {
	tree := map[string]any{
		"engine": map[string]any{"type": "redis", "redis": map[string]any{
			"channel_state": map[string]any{"vacated_event_delay": "10s", "num_partitions": 128}}},
		"channel": map[string]any{
			"proxy":      map[string]any{"state": map[string]any{"endpoint": "http://localhost:3000/centrifugo/channel_events"}},
			"namespaces": []any{map[string]any{"name": "chat", "presence": true, "state_proxy_enabled": true}},
		},
	}
	out, ps := mapCentrifugo(tree)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	ch, _ := out["channel"].(map[string]any)
	state, _ := ch["state"].(map[string]any)
	if ch["state_proxy"] != "channel.proxy.state" || state["vacated_event_delay"] != "10s" {
		t.Fatalf("channel: %v", ch)
	}
	proxies, _ := out["proxies"].([]any)
	if len(proxies) != 1 || proxies[0].(map[string]any)["name"] != "channel.proxy.state" {
		t.Fatalf("proxies: %v", proxies)
	}
}

// TestChannelStateOutputsChecks: a namespace with state events and only
// an output (no state proxy) is taken; an output without its address or
// of an unknown type is refused, naming the key.
func TestChannelStateOutputsChecks(t *testing.T) {
	const ns = "  namespaces: [{name: chat, state_proxy_enabled: true}]\n"
	cfg, err := Parse([]byte("channel:\n  state: {outputs: [{name: db, type: postgresql, postgresql: {dsn: 'postgres://localhost/app'}}]}\n" + ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("refused: %v", err)
	}
	if outs := cfg.StateOutputs(); len(outs) != 1 || outs[0].Postgres.Table != "herald_channel_state_events" {
		t.Fatalf("outputs: %+v, want one with the default table", outs)
	}
	for _, c := range []struct{ outputs, want string }{
		{"[{name: db, type: postgresql}]", "channel.state.outputs[0].postgresql.dsn: required"},
		{"[{name: db, type: postgresql, postgresql: {dsn: 'postgres://x/y', table: 'a b'}}]", "channel.state.outputs[0].postgresql.table"},
		{"[{name: db, type: sqs}]", `channel.state.outputs[0].type: "sqs": want "postgresql"`},
		{"[{name: k, type: kafka}]", "channel.state.outputs[0].kafka.brokers: required"},
		{"[{name: k, type: kafka, kafka: {brokers: [localhost:9092], topic: 'a b'}}]", "channel.state.outputs[0].kafka.topic"},
		{"[{name: q, type: nats, nats: {url: ''}}]", "channel.state.outputs[0].nats.url: required"},
		{"[{name: q, type: nats, nats: {subject: 'a.*'}}]", "channel.state.outputs[0].nats.subject"},
		{"[{name: s, type: redis_stream, redis_stream: {address: ''}}]", "channel.state.outputs[0].redis_stream.address: required"},
		{"[{name: s, type: redis_stream, redis_stream: {maxlen: -1}}]", "channel.state.outputs[0].redis_stream.maxlen"},
		{"[{type: postgresql, postgresql: {dsn: 'postgres://x/y'}}]", "channel.state.outputs[0].name: required"},
		{"[{name: db, type: postgresql, postgresql: {dsn: 'postgres://x/y'}}, {name: db, type: postgresql, postgresql: {dsn: 'postgres://x/z'}}]", `channel.state.outputs[1].name: "db" is used twice`},
	} {
		file := "channel:\n  state: {outputs: " + c.outputs + "}\n" + ns
		cfg, err := Parse([]byte(file))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\nproblems:\n%v\nwant one containing %s", file, err, c.want)
		}
	}
}
