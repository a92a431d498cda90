package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// centrifugoEnvOnly reads a configuration made of environ alone, as
// `centrifugo` started without a file does.
func centrifugoEnvOnly(t *testing.T, environ ...string) Config {
	t.Helper()
	cfg, format, err := LoadFile("", FormatAuto, environ)
	if err != nil {
		t.Fatalf("%v: %v", environ, err)
	}
	if format != FormatCentrifugo {
		t.Fatalf("format %q, want Centrifugo's", format)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return cfg
}

func namespaceByName(cfg Config, name string) (Namespace, bool) {
	for _, ns := range cfg.Channel.Namespaces {
		if ns.Name == name {
			return ns, true
		}
	}
	return Namespace{}, false
}

// sdkComposeEnv is what centrifuge-go's docker-compose.yml (which its CI
// starts) gives Centrifugo: nine variables, among them the smallhistory
// namespace named in one variable and its options in three others.
var sdkComposeEnv = []string{
	"CENTRIFUGO_CHANNEL_WITHOUT_NAMESPACE_DELTA_PUBLISH=true",
	"CENTRIFUGO_CHANNEL_WITHOUT_NAMESPACE_ALLOWED_DELTA_TYPES=fossil",
	"CENTRIFUGO_CHANNEL_WITHOUT_NAMESPACE_HISTORY_SIZE=100",
	"CENTRIFUGO_CHANNEL_WITHOUT_NAMESPACE_HISTORY_TTL=300s",
	"CENTRIFUGO_CHANNEL_WITHOUT_NAMESPACE_FORCE_RECOVERY=true",
	"CENTRIFUGO_CHANNEL_NAMESPACES=smallhistory",
	"CENTRIFUGO_CHANNEL_NAMESPACES_SMALLHISTORY_FORCE_RECOVERY=true",
	"CENTRIFUGO_CHANNEL_NAMESPACES_SMALLHISTORY_HISTORY_SIZE=2",
	"CENTRIFUGO_CHANNEL_NAMESPACES_SMALLHISTORY_HISTORY_TTL=300s",
}

// TestCentrifugoEnvSDKCompose: the nine variables are read into the keys
// Centrifugo reads them into, each one used.
func TestCentrifugoEnvSDKCompose(t *testing.T) {
	tree := map[string]any{}
	set, ps, _ := applyCentrifugoEnv(tree, sdkComposeEnv)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if len(set) != len(sdkComposeEnv) {
		t.Errorf("%d variables used, want %d: %v", len(set), len(sdkComposeEnv), set)
	}
	wn := lookupKey(tree, "channel.without_namespace").(map[string]any)
	if fmt.Sprint(wn["delta_publish"]) != "true" || fmt.Sprint(wn["allowed_delta_types"]) != "[fossil]" || fmt.Sprint(wn["history_size"]) != "100" ||
		wn["history_ttl"] != "300s" || wn["force_recovery"] != true {
		t.Errorf("without_namespace: %#v", wn)
	}
	want := []any{map[string]any{"name": "smallhistory", "force_recovery": true, "history_size": int64(2), "history_ttl": "300s"}}
	if got := lookupKey(tree, "channel.namespaces"); !reflect.DeepEqual(got, want) {
		t.Errorf("namespaces: %#v, want %#v", got, want)
	}
	// And as a configuration.
	cfg := centrifugoEnvOnly(t, sdkComposeEnv...)
	if wn := cfg.Channel.WithoutNamespace; wn.HistorySize != 100 || wn.HistoryTTL != 300*time.Second || !wn.ForceRecovery || !wn.DeltaPublish {
		t.Errorf("without_namespace: %+v", wn)
	}
	ns, ok := namespaceByName(cfg, "smallhistory")
	if !ok || len(cfg.Channel.Namespaces) != 1 || ns.HistorySize != 2 || ns.HistoryTTL != 300*time.Second || !ns.ForceRecovery {
		t.Errorf("namespaces: %+v", cfg.Channel.Namespaces)
	}
}

// TestCentrifugoEnvNames: lists of named objects given as names separated
// by spaces, each item's options in its own variables; an empty value
// leaves the file's list; names are added to the file's.
func TestCentrifugoEnvNames(t *testing.T) {
	cfg := centrifugoEnvOnly(t,
		"CENTRIFUGO_CHANNEL_NAMESPACES=chat feed",
		"CENTRIFUGO_CHANNEL_NAMESPACES_CHAT_HISTORY_SIZE=10",
		"CENTRIFUGO_CHANNEL_NAMESPACES_CHAT_HISTORY_TTL=60s",
		"CENTRIFUGO_CHANNEL_NAMESPACES_FEED_PRESENCE=true",
		"CENTRIFUGO_PROXIES=p1",
		"CENTRIFUGO_PROXIES_P1_ENDPOINT=http://backend/p1",
		"CENTRIFUGO_PROXIES_P1_TIMEOUT=2s",
		"CENTRIFUGO_RPC_NAMESPACES=calc",
		"CENTRIFUGO_RPC_NAMESPACES_CALC_PROXY_ENABLED=true",
		"CENTRIFUGO_RPC_NAMESPACES_CALC_PROXY_NAME=p1",
		"CENTRIFUGO_CONSUMERS=outbox",
		"CENTRIFUGO_CONSUMERS_OUTBOX_ENABLED=true",
		"CENTRIFUGO_CONSUMERS_OUTBOX_TYPE=postgresql",
		"CENTRIFUGO_CONSUMERS_OUTBOX_POSTGRESQL_DSN=postgres://db/app",
		"CENTRIFUGO_CONSUMERS_OUTBOX_POSTGRESQL_OUTBOX_TABLE_NAME=centrifugo_outbox",
	)
	chat, _ := namespaceByName(cfg, "chat")
	feed, _ := namespaceByName(cfg, "feed")
	if len(cfg.Channel.Namespaces) != 2 || chat.HistorySize != 10 || chat.HistoryTTL != time.Minute || chat.Presence || !feed.Presence {
		t.Errorf("namespaces: %+v", cfg.Channel.Namespaces)
	}
	if len(cfg.Proxies) != 1 || cfg.Proxies[0].Name != "p1" || cfg.Proxies[0].URL != "http://backend/p1" || cfg.Proxies[0].Timeout != 2*time.Second {
		t.Errorf("proxies: %+v", cfg.Proxies)
	}
	if got := fmt.Sprintf("%+v", cfg.RPC.Namespaces); !strings.Contains(got, "calc") || !strings.Contains(got, "p1") {
		t.Errorf("rpc namespaces: %s", got)
	}
	if len(cfg.ConsumerList) != 1 || cfg.ConsumerList[0].Name != "outbox" || !cfg.ConsumerList[0].Enabled || cfg.ConsumerList[0].Type != "postgresql" ||
		cfg.ConsumerList[0].Postgres.DSN != "postgres://db/app" {
		t.Errorf("consumers: %+v", cfg.ConsumerList)
	}

	// `centrifugo defaultenv` writes CENTRIFUGO_CHANNEL_NAMESPACES="" (and
	// an empty value for many options): not set, so the file's stay.
	file := []byte(`{"channel": {"namespaces": [{"name": "chat", "presence": true}]}, "admin": {"enabled": true, "password": "p", "secret": "s"}}`)
	cfg, err := ParseCentrifugo(file, "c.json", []string{
		"CENTRIFUGO_CHANNEL_NAMESPACES=", "CENTRIFUGO_RPC_NAMESPACES=", "CENTRIFUGO_PROXIES=", "CENTRIFUGO_CONSUMERS=",
		"CENTRIFUGO_ADMIN_ENABLED=", "CENTRIFUGO_CLIENT_CHANNEL_LIMIT=", "CENTRIFUGO_CHANNEL_NAMESPACES_CHAT_PRESENCE=",
		"CENTRIFUGO_GRAPHITE_ENABLED=",
	})
	if err != nil {
		t.Fatal(err)
	}
	if ns, _ := namespaceByName(cfg, "chat"); len(cfg.Channel.Namespaces) != 1 || !ns.Presence || !cfg.Admin.UI.Enabled || cfg.Client.ChannelLimit != 128 {
		t.Errorf("empty values: %+v %+v %d", cfg.Channel.Namespaces, cfg.Admin.UI, cfg.Client.ChannelLimit)
	}
	if cfg := centrifugoEnvOnly(t, "CENTRIFUGO_CHANNEL_NAMESPACES="); len(cfg.Channel.Namespaces) != 0 {
		t.Errorf("empty value, no file: %+v", cfg.Channel.Namespaces)
	}

	// Names are added to the file's list (Centrifugo appends them); a JSON
	// array replaces it.
	cfg, err = ParseCentrifugo(file, "c.json", []string{"CENTRIFUGO_CHANNEL_NAMESPACES=feed", "CENTRIFUGO_CHANNEL_NAMESPACES_FEED_JOIN_LEAVE=true"})
	if err != nil {
		t.Fatal(err)
	}
	if feed, ok := namespaceByName(cfg, "feed"); len(cfg.Channel.Namespaces) != 2 || !ok || !feed.JoinLeave {
		t.Errorf("names added to the file's: %+v", cfg.Channel.Namespaces)
	}
	cfg, err = ParseCentrifugo(file, "c.json", []string{`CENTRIFUGO_CHANNEL_NAMESPACES=[{"name": "feed"}]`})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := namespaceByName(cfg, "feed"); len(cfg.Channel.Namespaces) != 1 || !ok {
		t.Errorf("JSON replaces the file's: %+v", cfg.Channel.Namespaces)
	}
}

// TestCentrifugoEnvNameCollision: chat-room and chat_room both read
// CENTRIFUGO_CHANNEL_NAMESPACES_CHAT_ROOM_*, as each of Centrifugo's
// namespaces reads the variables of its own prefix.
func TestCentrifugoEnvNameCollision(t *testing.T) {
	cfg := centrifugoEnvOnly(t,
		"CENTRIFUGO_CHANNEL_NAMESPACES=chat-room chat_room other",
		"CENTRIFUGO_CHANNEL_NAMESPACES_CHAT_ROOM_HISTORY_SIZE=10",
		"CENTRIFUGO_CHANNEL_NAMESPACES_CHAT_ROOM_HISTORY_TTL=60s",
	)
	for _, name := range []string{"chat-room", "chat_room"} {
		if ns, ok := namespaceByName(cfg, name); !ok || ns.HistorySize != 10 || ns.HistoryTTL != time.Minute {
			t.Errorf("%s: %+v", name, ns)
		}
	}
	if ns, _ := namespaceByName(cfg, "other"); ns.HistorySize != 0 {
		t.Errorf("other: %+v", ns)
	}
}

// TestCentrifugoEnvPassedOver: the variables Kubernetes sets for a service
// named centrifugo, and CENTRIFUGO_VAR_ ones, are neither used nor
// refused, as in Centrifugo.
func TestCentrifugoEnvPassedOver(t *testing.T) {
	centrifugoEnvOnly(t,
		"CENTRIFUGO_PORT=tcp://10.0.0.1:8000",
		"CENTRIFUGO_PORT_8000_TCP_ADDR=10.0.0.1",
		"CENTRIFUGO_SERVICE_HOST=10.0.0.1",
		"CENTRIFUGO_SERVICE_PORT_HTTP=8000",
		"CENTRIFUGO_VAR_BACKEND_TOKEN=secret",
	)
	// An unknown variable is warned about, as Centrifugo does, and refused
	// by a strict check.
	cfg, err := ParseCentrifugo([]byte("{}"), "c.json", []string{"CENTRIFUGO_NO_SUCH_OPTION=1"})
	if err != nil || cfg.Strict() == nil || !strings.Contains(cfg.Strict().Error(), "CENTRIFUGO_NO_SUCH_OPTION: unknown variable") {
		t.Errorf("an unknown variable: %v, strict %v", err, cfg.Strict())
	}
}
