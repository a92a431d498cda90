package config

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
)

// TestCentrifugoSharedPoll: the shared poll keys of centrifuge-js 5.8's CI
// configuration (centrifugo_test.json) import as they are, and the
// result validates.
func TestCentrifugoSharedPoll(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{
  "client": {"insecure": true},
  "shared_poll": {"hmac_secret_key": "test-poll-secret", "concurrency_limit": 16},
  "proxies": [{"name": "poll_backend", "endpoint": "http://127.0.0.1:3010/refresh", "timeout": "5s"}],
  "channel": {"namespaces": [
    {"name": "poll", "subscription_type": "shared_poll", "allow_subscribe_for_client": true,
     "shared_poll": {"proxy_name": "poll_backend", "mode": "versioned", "refresh_interval": "200ms",
                     "refresh_batch_size": 100, "max_keys_per_connection": 100, "channel_shutdown_delay": "1s",
                     "track_expired_extra_delay": "5s"}},
    {"name": "pollvl", "subscription_type": "shared_poll", "allow_subscribe_for_client": true,
     "shared_poll": {"proxy_name": "poll_backend", "refresh_interval": "200ms"}}
  ]}
}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.SharedPoll.HMACSecretKey != "test-poll-secret" {
		t.Errorf("shared_poll: %+v", cfg.SharedPoll)
	}
	sp := cfg.Channel.Namespaces[0].SharedPoll
	want := hub.SharedPollOptions{ProxyName: "poll_backend", Mode: hub.SharedPollVersioned, RefreshInterval: 200 * time.Millisecond, RefreshBatchSize: 100, MaxKeysPerConnection: 100, TrackExpiredExtraDelay: 5 * time.Second}
	if sp != want {
		t.Errorf("namespace shared_poll: %+v, want %+v", sp, want)
	}
	if got := cfg.Channel.Namespaces[1].SharedPoll; got.Mode != hub.SharedPollVersionless || got.RefreshBatchSize != hub.DefaultSharedPollRefreshBatchSize || got.TrackExpiredExtraDelay != hub.DefaultSharedPollTrackExpiredExtraDelay {
		t.Errorf("defaults: %+v", got)
	}
	opts, ok := cfg.ProxyOptions()
	if !ok || opts.SharedPollRefresh["poll"] != "poll_backend" || opts.SharedPollRefresh["pollvl"] != "poll_backend" {
		t.Errorf("proxy options: %v %+v", ok, opts.SharedPollRefresh)
	}

	// Without the key, or with a proxy that does not exist, it does not.
	cfg.SharedPoll.HMACSecretKey = ""
	cfg.Channel.Namespaces[1].SharedPoll.ProxyName = "nope"
	err = cfg.Validate()
	for _, key := range []string{"shared_poll.hmac_secret_key", "channel.namespaces[1].shared_poll.proxy_name"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("want a problem with %s, got %v", key, err)
		}
	}
}

// TestCentrifugoSharedPollDefaultProxy: a shared_poll namespace that names
// no proxy, or "default", polls channel.proxy.shared_poll_refresh, as in
// Centrifugo v6.9.1; without that proxy the import says so.
func TestCentrifugoSharedPollDefaultProxy(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{
  "shared_poll": {"hmac_secret_key": "test-poll-secret"},
  "channel": {
    "proxy": {"shared_poll_refresh": {"endpoint": "http://127.0.0.1:3010/refresh"}},
    "without_namespace": {"subscription_type": "shared_poll"},
    "namespaces": [
      {"name": "pa", "subscription_type": "shared_poll"},
      {"name": "pb", "subscription_type": "shared_poll", "shared_poll": {"proxy_name": "default", "refresh_interval": "2s"}},
      {"name": "pc", "subscription_type": "shared_poll", "shared_poll": {"proxy_name": ""}}
    ]}
}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	opts, ok := cfg.ProxyOptions()
	for _, ns := range []string{"", "pa", "pb", "pc"} {
		if !ok || opts.SharedPollRefresh[ns] != sharedPollDefaultProxy {
			t.Errorf("namespace %q polls %q", ns, opts.SharedPollRefresh[ns])
		}
	}
	if got := cfg.Channel.Namespaces[1].SharedPoll.RefreshInterval; got != 2*time.Second {
		t.Errorf("refresh_interval of pb: %v", got)
	}

	_, err = ParseCentrifugo([]byte(`{"shared_poll": {"hmac_secret_key": "s"},
  "channel": {"namespaces": [{"name": "pa", "subscription_type": "shared_poll"}]}}`), "c.json", nil)
	if err == nil || !strings.Contains(err.Error(), "channel.proxy.shared_poll_refresh") {
		t.Errorf("no default proxy: %v", err)
	}
}
