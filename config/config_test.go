package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
)

func TestParseConfigReportsProblemsByKey(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown key with suggestion", "client:\n  token:\n    hmac_secret: x\n",
			`line 3: client.token.hmac_secret: unknown key (did you mean "client.token.hmac_secret_key"?)`},
		{"unknown top-level key", "adress: \":8000\"\n", `line 1: adress: unknown key (did you mean "address"?)`},
		{"wrong type", "client:\n  channel_limit: lots\n", `line 2: client.channel_limit: want a whole number, got "lots"`},
		{"wrong bool", "client:\n  insecure: maybe\n", `line 2: client.insecure: want true or false, got "maybe"`},
		{"bad duration", "client:\n  ping_interval: 25 seconds\n", `line 2: client.ping_interval: invalid duration "25 seconds"`},
		{"namespace option typo", "channel:\n  namespaces:\n    - name: chat\n      presense: true\n",
			`line 4: channel.namespaces[0].presense: unknown key (did you mean "channel.namespaces[0].presence"?)`},
		{"negative duration", "client:\n  ping_interval: -5s\n", `line 2: client.ping_interval: invalid duration "-5s": must not be negative`},
		{"list expected", "channel:\n  namespaces: chat\n", `line 2: channel.namespaces: want a list`},
		{"duration as a mapping", "client:\n  command_timeout: {s: 1}\n", `line 2: client.command_timeout: invalid duration: want a string like "25s" or a number of seconds`},
		{"not yaml", "client: [\n", "not valid YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant it to contain %s", err, c.want)
			}
		})
	}
}

func TestNegativeNotSentLowatIsRefused(t *testing.T) {
	cfg, err := Parse([]byte("http:\n  tcp_notsent_lowat: -1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "http.tcp_notsent_lowat: -1: must not be negative") {
		t.Fatalf("got %v", err)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	cfg, err := Parse([]byte(`
engine: {type: postgress}
log: {level: loud}
websocket: {poller: kqueue}
client:
  ping_interval: 5s
  pong_timeout: 10s
channel:
  namespaces:
    - name: "bad name!"
    - name: hist
      history_size: 10
`))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	if err == nil {
		t.Fatal("want problems")
	}
	for _, want := range []string{
		`engine.type: unknown engine "postgress"`,
		`log.level: "loud": want debug, info, warn or error`,
		`websocket.poller: "kqueue": want "auto", "epoll" or "portable"`,
		`client.pong_timeout: 10s must be shorter than ping_interval (5s)`,
		`channel.namespaces[0].name: "bad name!": must match`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems:\n%v\nwant one containing %s", err, want)
		}
	}
	secs, err := Parse([]byte("client:\n  ping_interval: 30\n  pong_timeout: 1.5\n"))
	if err != nil || secs.Client.PingInterval != 30*time.Second || secs.Client.PongTimeout != 1500*time.Millisecond {
		t.Errorf("bare numbers are seconds: got %v, %v (%v)", secs.Client.PingInterval, secs.Client.PongTimeout, err)
	}
	cfg.Channel.Namespaces = cfg.Channel.Namespaces[1:]
	cfg.Engine.Type, cfg.Log.Level, cfg.Client.PongTimeout, cfg.WebSocket.Poller = "memory", "info", 0, "portable"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "history_size and history_ttl must be set together") {
		t.Fatalf("want the history pairing problem, got %v", err)
	}
}

func TestApplyEnvOverridesEveryKind(t *testing.T) {
	cfg := Default()
	unknown, err := ApplyEnv(&cfg, []string{
		"HERALD_ADDRESS=127.0.0.1:9000",
		"HERALD_CLIENT_TOKEN_HMAC_SECRET_KEY=s3cret: with colon",
		"HERALD_CLIENT_CHANNEL_LIMIT=5",
		"HERALD_CLIENT_INSECURE=true",
		"HERALD_CLIENT_PING_INTERVAL=10s",
		"HERALD_WEBSOCKET_ALLOWED_ORIGINS=https://a.example, https://b.example",
		"HERALD_WEBSOCKET_POLLER=portable",
		`HERALD_CHANNEL_NAMESPACES=[{"name":"chat","presence":true,"history_size":10,"history_ttl":"1m"}]`,
		"HERALD_NO_SUCH_KEY=1",
		"HERALD_TEST_POSTGRES_DSN=ignored",
		"PATH=/bin",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unknown, []string{"HERALD_NO_SUCH_KEY"}) {
		t.Errorf("unknown = %v, want [HERALD_NO_SUCH_KEY]", unknown)
	}
	if cfg.Address != "127.0.0.1:9000" || cfg.Client.Token.HMACSecretKey != "s3cret: with colon" ||
		cfg.Client.ChannelLimit != 5 || !cfg.Client.Insecure || cfg.Client.PingInterval != 10*time.Second {
		t.Errorf("scalars not applied: %+v", cfg)
	}
	if !reflect.DeepEqual(cfg.WebSocket.AllowedOrigins, []string{"https://a.example", "https://b.example"}) {
		t.Errorf("allowed_origins = %v", cfg.WebSocket.AllowedOrigins)
	}
	if cfg.WebSocket.Poller != "portable" {
		t.Errorf("poller = %q, want portable", cfg.WebSocket.Poller)
	}
	if len(cfg.Channel.Namespaces) != 1 || cfg.Channel.Namespaces[0].Name != "chat" ||
		!cfg.Channel.Namespaces[0].Presence || cfg.Channel.Namespaces[0].HistoryTTL != time.Minute {
		t.Errorf("namespaces = %+v", cfg.Channel.Namespaces)
	}
	if _, err := ApplyEnv(&cfg, []string{"HERALD_CLIENT_CHANNEL_LIMIT=many"}); err == nil ||
		!strings.Contains(err.Error(), `HERALD_CLIENT_CHANNEL_LIMIT (for client.channel_limit): want a whole number, got "many"`) {
		t.Errorf("want an error naming the variable and key, got %v", err)
	}
}

func TestExampleConfigIsValidAndComplete(t *testing.T) {
	example := Example() // made once: made per key it took a minute under -race
	cfg, err := Parse([]byte(example))
	if err != nil {
		t.Fatalf("example does not parse: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("example is not valid: %v", err)
	}
	if !reflect.DeepEqual(cfg.Address, Default().Address) {
		t.Errorf("example address %q differs from the default", cfg.Address)
	}
	for _, key := range yamlKeys(reflect.TypeOf(Config{}), "") {
		leaf := key[strings.LastIndex(key, ".")+1:]
		if !strings.Contains(example, leaf+":") {
			t.Errorf("example config lacks %s", key)
		}
	}
}

func TestWarnings(t *testing.T) {
	cfg := Default()
	if !cfg.AuthUnconfigured() {
		t.Error("the defaults configure no authentication")
	}
	w := strings.Join(cfg.Warnings(), "\n")
	if !strings.Contains(w, "no keys are configured: `herald serve` generates random ones") {
		t.Errorf("want the generated-keys warning, got %q", w)
	}
	cfg.HTTPAPI.Key = "k"
	w = strings.Join(cfg.Warnings(), "\n")
	if cfg.AuthUnconfigured() || !strings.Contains(w, "no key is configured, so every connection will be refused") {
		t.Errorf("with an API key only: want the missing-token-key warning, got %q", w)
	}
	cfg.HTTPAPI.Key = ""
	cfg.Client.AllowAnonymousConnectWithoutToken = true
	if cfg.AuthUnconfigured() {
		t.Error("anonymous access is a choice about authentication")
	}
	cfg.Client.AllowAnonymousConnectWithoutToken = false
	cfg.Client.Token.HMACSecretKey = strings.Repeat("k", minHMACSecretLen)
	cfg.HTTPAPI.Key = strings.Repeat("k", minAPIKeyLen)
	if w := cfg.Warnings(); len(w) != 0 {
		t.Errorf("want no warnings, got %v", w)
	}
}

// TestShortSecretsWarned: a placeholder such as "change-me" is accepted
// (a first try uses one) but each short secret gets a warning naming its key.
func TestShortSecretsWarned(t *testing.T) {
	cfg, err := Parse([]byte("client:\n  token:\n    hmac_secret_key: \"change-me\"\nhttp_api:\n  key: \"change-me-too\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("short secrets are valid: %v", err)
	}
	w := strings.Join(cfg.Warnings(), "\n")
	for _, want := range []string{
		"client.token.hmac_secret_key is 9 characters long, shorter than 32",
		"http_api.key is 13 characters long, shorter than 32",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("want the warning %q, got %q", want, w)
		}
	}
	cfg.Client.Token.HMACSecretKey = strings.Repeat("a", 31)
	cfg.HTTPAPI.Key = strings.Repeat("b", 32)
	w = strings.Join(cfg.Warnings(), "\n")
	if !strings.Contains(w, "hmac_secret_key is 31 characters long") || strings.Contains(w, "http_api.key is") {
		t.Errorf("31 characters is short, 32 is not: %q", w)
	}
}

func TestNATSEngineRefusesHistoryAndPresence(t *testing.T) {
	cfg, err := Parse([]byte(`
engine: {type: nats}
channel:
  without_namespace: {join_leave: true}
  namespaces:
    - {name: chat, history_size: 10, history_ttl: 60s, force_recovery: true, presence: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	for _, want := range []string{
		`channel.namespaces[0].history_size: engine "nats" keeps no history`,
		`channel.namespaces[0].force_recovery: engine "nats" keeps no history`,
		`channel.namespaces[0].presence: engine "nats" keeps no presence (set engine.presence: redis`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("problems:\n%v\nwant one containing %s", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "without_namespace") {
		t.Errorf("join_leave alone works on NATS, got %v", err)
	}
	cfg.Engine.NATS.Presence = "redis"
	cfg.Channel.Namespaces[0] = Namespace{Namespace: hub.Namespace{Name: "chat", NamespaceOptions: hub.NamespaceOptions{Presence: true}}}
	if err := cfg.Validate(); err != nil {
		t.Errorf("presence with engine.nats.presence redis: %v", err)
	}
}

func TestQueuePolicyAndCommandTimeout(t *testing.T) {
	cfg, err := Parse([]byte(`
client: {command_timeout: 2s}
channel:
  without_namespace: {queue_policy: close}
  namespaces:
    - {name: prices, queue_policy: drop_oldest}
    - {name: news, queue_policy: drop_newest}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	want := `channel.namespaces[1].queue_policy: "drop_newest": want close or drop_oldest`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v\nwant a problem containing %s", err, want)
	}
	if strings.Contains(err.Error(), "namespaces[0]") || strings.Contains(err.Error(), "without_namespace") {
		t.Errorf("close and drop_oldest are valid, got %v", err)
	}
	h := cfg.Hub("")
	if h.Client.CommandTimeout != 2*time.Second || h.Channels.Namespaces[0].QueuePolicy != hub.QueueDropOldest ||
		h.Channels.WithoutNamespace.QueuePolicy != hub.QueueClose {
		t.Errorf("hub config: command timeout %v, policies %q, %q", h.Client.CommandTimeout,
			h.Channels.Namespaces[0].QueuePolicy, h.Channels.WithoutNamespace.QueuePolicy)
	}
}

func TestTokenCacheSize(t *testing.T) {
	cfg, err := Parse([]byte("client:\n  token:\n    hmac_secret_key: k\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Client.Token.CacheSize != DefaultTokenCacheSize {
		t.Errorf("cache_size = %d, want the default %d", cfg.Client.Token.CacheSize, DefaultTokenCacheSize)
	}
	cfg, err = Parse([]byte("client:\n  token:\n    hmac_secret_key: k\n    cache_size: 0\n"))
	if err != nil || cfg.Client.Token.CacheSize != 0 || cfg.Validate() != nil {
		t.Errorf("cache_size 0: %d, %v, %v", cfg.Client.Token.CacheSize, err, cfg.Validate())
	}
	cfg.Client.Token.CacheSize = -1
	err = cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "client.token.cache_size") || strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("cache_size -1: want one problem naming client.token.cache_size, got %v", err)
	}
}
