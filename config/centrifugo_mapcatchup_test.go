package config

import (
	"testing"
	"time"
)

// map.live_transition_max_publication_limit is taken as it is, and
// map.subscribe_catch_up_timeout with Centrifugo's meaning of zero (5s)
// and of a negative value (no bound, Herald's zero), from every format
// and in channel.without_namespace too.
func TestCentrifugoMapCatchUp(t *testing.T) {
	files := map[string]string{
		"c.json": `{"channel": {"namespaces": [
			{"name": "a", "subscription_type": "map", "map": {"mode": "persistent", "live_transition_max_publication_limit": 7, "subscribe_catch_up_timeout": "0s"}},
			{"name": "b", "subscription_type": "map", "map": {"mode": "persistent", "live_transition_max_publication_limit": -1, "subscribe_catch_up_timeout": "-1s"}},
			{"name": "c", "subscription_type": "map", "map": {"mode": "persistent", "subscribe_catch_up_timeout": "30s"}}],
			"without_namespace": {"subscription_type": "map", "map": {"mode": "persistent", "subscribe_catch_up_timeout": "0"}}}}`,
		"c.yaml": "channel:\n  namespaces:\n" +
			"    - {name: a, subscription_type: map, map: {mode: persistent, live_transition_max_publication_limit: 7, subscribe_catch_up_timeout: 0s}}\n" +
			"    - {name: b, subscription_type: map, map: {mode: persistent, live_transition_max_publication_limit: -1, subscribe_catch_up_timeout: -1s}}\n" +
			"    - {name: c, subscription_type: map, map: {mode: persistent, subscribe_catch_up_timeout: 30s}}\n" +
			"  without_namespace: {subscription_type: map, map: {mode: persistent, subscribe_catch_up_timeout: \"0\"}}\n",
		"c.toml": "[[channel.namespaces]]\nname = \"a\"\nsubscription_type = \"map\"\nmap = {mode = \"persistent\", live_transition_max_publication_limit = 7, subscribe_catch_up_timeout = \"0s\"}\n" +
			"[[channel.namespaces]]\nname = \"b\"\nsubscription_type = \"map\"\nmap = {mode = \"persistent\", live_transition_max_publication_limit = -1, subscribe_catch_up_timeout = \"-1s\"}\n" +
			"[[channel.namespaces]]\nname = \"c\"\nsubscription_type = \"map\"\nmap = {mode = \"persistent\", subscribe_catch_up_timeout = \"30s\"}\n" +
			"[channel.without_namespace]\nsubscription_type = \"map\"\nmap = {mode = \"persistent\", subscribe_catch_up_timeout = \"0\"}\n",
	}
	for name, text := range files {
		cfg, err := ParseCentrifugo([]byte(text), name, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := map[string][2]any{}
		for _, ns := range cfg.Channel.Namespaces {
			got[ns.Name] = [2]any{ns.Map.LiveTransitionMaxPublicationLimit, ns.Map.SubscribeCatchUpTimeout}
		}
		want := map[string][2]any{"a": {7, 5 * time.Second}, "b": {-1, time.Duration(0)}, "c": {0, 30 * time.Second}}
		for ns, w := range want {
			if got[ns] != w {
				t.Errorf("%s: namespace %s: limit and timeout %v, want %v", name, ns, got[ns], w)
			}
		}
		if d := cfg.Channel.WithoutNamespace.Map.SubscribeCatchUpTimeout; d != 5*time.Second {
			t.Errorf("%s: without_namespace timeout %s", name, d)
		}
	}
}
