package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "centrifugo", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func parseCentrifugo(t *testing.T, name string, environ ...string) Config {
	t.Helper()
	cfg, err := ParseCentrifugo(readTestdata(t, name), name, environ)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("%s: Validate: %v", name, err)
	}
	return cfg
}

// TestCentrifugoFormatsAgree: the file `centrifugo genconfig` writes, in
// each of its three formats, is the same Herald configuration, with every
// key where the key map says.
func TestCentrifugoFormatsAgree(t *testing.T) {
	want := parseCentrifugo(t, "genconfig.json")
	for _, name := range []string{"genconfig.yaml", "genconfig.toml"} {
		if got := parseCentrifugo(t, name); !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs from genconfig.json:\n%+v\n%+v", name, got, want)
		}
	}
	if want.Client.Token.HMACSecretKey != "bbe7d157-a253-4094-9759-06a8236543f9" || want.HTTPAPI.Key != "d7627bb6-2292-4911-82e1-615c0ed3eebb" ||
		want.Admin.UI.Enabled || want.Admin.UI.Password != "d0683813-0916-4c49-979f-0e08a686b727" ||
		want.Admin.UI.TokenSecret != "4e9eafcf-0120-4ddd-b668-8dc40072c78e" || len(want.WebSocket.AllowedOrigins) != 0 {
		t.Errorf("genconfig: %+v %+v %+v", want.Client.Token, want.HTTPAPI, want.Admin.UI)
	}
	// Centrifugo's defaults where they differ from Herald's.
	if want.HTTPStream.Enabled || want.SSE.Enabled {
		t.Errorf("http_stream %v, sse %v: off by default in Centrifugo", want.HTTPStream.Enabled, want.SSE.Enabled)
	}
	// Without the extension, the content says the format.
	for _, name := range []string{"genconfig.json", "genconfig.yaml", "genconfig.toml"} {
		got, err := ParseCentrifugo(readTestdata(t, name), "config", nil)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s read without its extension: %v", name, err)
		}
	}
}

func TestCentrifugoDetection(t *testing.T) {
	for _, name := range []string{"genconfig.json", "genconfig.yaml", "genconfig.toml", "quickstart.json", "proxy.json", "named_proxies.json", "namespaces.json", "redis.json"} {
		if !IsCentrifugo(readTestdata(t, name), name) {
			t.Errorf("%s is not detected as a Centrifugo configuration", name)
		}
	}
	for name, herald := range map[string]string{
		"example":       Example(),
		"proxy by name": "proxies: [{name: auth, endpoint: 'http://x'}]\nclient:\n  proxy: {connect: auth}\nrpc: {proxy: auth}\n",
		"typo":          "client:\n  tokn: {}\n",
		"empty":         "",
	} {
		if IsCentrifugo([]byte(herald), "herald.yaml") {
			t.Errorf("the Herald file %q is detected as Centrifugo's", name)
		}
	}
	if got := CentrifugoSign(readTestdata(t, "genconfig.json"), "genconfig.yaml"); got != "admin.enabled" {
		t.Errorf("genconfig.json as .yaml: detected by %q, want admin.enabled (the first key only Centrifugo has)", got)
	}
	// JSON is Centrifugo's even with keys both have: Herald's files are YAML.
	if got := CentrifugoSign(readTestdata(t, "namespaces.json"), "namespaces.json"); got != "JSON" {
		t.Errorf("namespaces.json: %q", got)
	}
	if got := CentrifugoSign(readTestdata(t, "namespaces.json"), "config"); got != "" {
		t.Errorf("namespaces.json without its extension: %q, want a Herald file (every key is Herald's too)", got)
	}
	if got := CentrifugoSign([]byte("a = 1\n"), "c.toml"); got != "TOML" {
		t.Errorf("TOML: %q", got)
	}
	for name, cf := range map[string]string{
		"http_server":              "http_server: {port: 9000}\n",
		"client.allowed_origins":   "client: {allowed_origins: ['https://a.example']}\n",
		"connect proxy object":     "client: {proxy: {connect: {enabled: true, endpoint: 'http://x'}}}\n",
		"namespace proxy flag":     "channel: {namespaces: [{name: a, subscribe_proxy_enabled: true}]}\n",
		"proxy flag, no namespace": "channel: {without_namespace: {publish_proxy_enabled: true}}\n",
	} {
		if !IsCentrifugo([]byte(cf), "config.yaml") {
			t.Errorf("%s: not detected as Centrifugo's", name)
		}
	}
}

// TestCentrifugoKeyMap checks the renamed and reshaped keys.
func TestCentrifugoKeyMap(t *testing.T) {
	file := `{
  "http_server": {"address": "127.0.0.1", "port": 9001},
  "log": {"level": "trace"},
  "node": {"name": "n1", "info_metrics_aggregate_interval": "60s"},
  "engine": {"type": "redis", "redis": {"address": "redis://u:p@10.0.0.1:6380/2", "prefix": "cf"}},
  "client": {"allowed_origins": ["https://a.example"], "ping_interval": "20s", "channel_limit": 64,
             "token": {"hmac_secret_key": "s", "audience": "aud"}},
  "channel": {"history_meta_ttl": "240h", "max_length": 100, "private_prefix": "$",
              "without_namespace": {"presence": true},
              "namespaces": [{"name": "chat", "history_size": 10, "history_ttl": "300s", "force_recovery": true, "force_recovery_mode": "stream"},
                             {"name": "keep", "history_meta_ttl": "1h"}]},
  "http_api": {"key": "k", "handler_prefix": "/api"},
  "admin": {"enabled": true, "password": "password1", "secret": "0123456789abcdef", "handler_prefix": "/ui"},
  "prometheus": {"enabled": true},
  "usage_stats": {"disabled": true},
  "health": {"enabled": false},
  "websocket": {"compression": true, "handler_prefix": "/connection/websocket", "write_timeout": "2s"},
  "sse": {"enabled": true},
  "uni_websocket": {"enabled": true},
  "shutdown": {"timeout": "20s"}
}`
	cfg, err := ParseCentrifugo([]byte(file), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]any{
		"address":             {cfg.Address, "127.0.0.1:9001"},
		"log.level":           {cfg.Log.Level, "debug"},
		"name":                {cfg.Name, "n1"},
		"redis address":       {strings.Join(cfg.Engine.Redis.Address, ","), "10.0.0.1:6380"},
		"redis user":          {cfg.Engine.Redis.Username, "u"},
		"redis password":      {cfg.Engine.Redis.Password, "p"},
		"redis db":            {cfg.Engine.Redis.DB, 2},
		"redis prefix":        {cfg.Engine.Redis.Prefix, "cf"},
		"origins":             {strings.Join(cfg.WebSocket.AllowedOrigins, ","), "https://a.example"},
		"ping":                {cfg.Client.PingInterval, 20 * time.Second},
		"channel_limit":       {cfg.Client.ChannelLimit, 64},
		"audience":            {cfg.Client.Token.Audience, "aud"},
		"max_length":          {cfg.Channel.MaxLength, 100},
		"meta ttl (none)":     {cfg.Channel.WithoutNamespace.HistoryMetaTTL, 240 * time.Hour},
		"meta ttl (chat)":     {cfg.Channel.Namespaces[0].HistoryMetaTTL, 240 * time.Hour},
		"meta ttl (own)":      {cfg.Channel.Namespaces[1].HistoryMetaTTL, time.Hour},
		"presence":            {cfg.Channel.WithoutNamespace.Presence, true},
		"history_size":        {cfg.Channel.Namespaces[0].HistorySize, 10},
		"admin path":          {cfg.Admin.UI.Path, "/ui"},
		"admin enabled":       {cfg.Admin.UI.Enabled, true},
		"compression":         {cfg.WebSocket.Compression, true},
		"write_timeout":       {cfg.WebSocket.WriteTimeout, 2 * time.Second},
		"sse":                 {cfg.SSE.Enabled, true},
		"http_stream":         {cfg.HTTPStream.Enabled, false},
		"uni_websocket":       {cfg.UniWebSocket.Enabled, true},
		"shutdown":            {cfg.Shutdown.Timeout, 20 * time.Second},
		"api key":             {cfg.HTTPAPI.Key, "k"},
		"ws origins, not API": {len(cfg.HTTPAPI.AllowedOrigins), 0},
	}
	for name, c := range checks {
		if !reflect.DeepEqual(reflect.ValueOf(c[0]).Convert(reflect.TypeOf(c[1])).Interface(), c[1]) {
			t.Errorf("%s: got %v, want %v", name, c[0], c[1])
		}
	}
	// log levels Herald does not have.
	for level, want := range map[string]string{"none": "error", "debug": "debug", "warn": "warn"} {
		cfg, err := ParseCentrifugo([]byte(`{"log": {"level": "`+level+`"}}`), "c.json", nil)
		if err != nil || cfg.Log.Level != want {
			t.Errorf("log.level %s: %q %v, want %q", level, cfg.Log.Level, err, want)
		}
	}
}

func TestCentrifugoProxies(t *testing.T) {
	cfg := parseCentrifugo(t, "proxy.json")
	names := map[string]ProxyEndpointConfig{}
	for _, p := range cfg.Proxies {
		names[p.Name] = p
	}
	connect, ok := names["client.proxy.connect"]
	if !ok || cfg.Client.Proxy.Connect != "client.proxy.connect" || connect.URL != "https://your_backend/centrifugo/connect" ||
		len(connect.HTTPHeaders) != 6 || connect.Timeout != time.Second {
		t.Errorf("connect proxy: %q %+v", cfg.Client.Proxy.Connect, connect)
	}
	if cfg.Channel.Namespaces[0].SubscribeProxy != "channel.proxy.subscribe" || names["channel.proxy.subscribe"].URL != "http://localhost:3000/centrifugo/subscribe" {
		t.Errorf("subscribe proxy: %+v %+v", cfg.Channel.Namespaces[0].NamespaceProxyOptions, names)
	}

	cfg = parseCentrifugo(t, "named_proxies.json")
	ns := cfg.Channel.Namespaces[0]
	if ns.SubscribeProxy != "subscribe1" || ns.PublishProxy != "publish1" || cfg.RPC.Namespaces[0].Proxy != "rpc1" || len(cfg.Proxies) != 3 {
		t.Errorf("named proxies: %+v %+v %d", ns.NamespaceProxyOptions, cfg.RPC, len(cfg.Proxies))
	}

	// Static headers, a disabled connect proxy, rpc.proxy and the RPC
	// options without namespace.
	cfg, err := ParseCentrifugo([]byte(`{
  "client": {"proxy": {"connect": {"enabled": false, "endpoint": "http://unused"},
                       "refresh": {"enabled": true, "endpoint": "http://b/refresh", "timeout": "3s", "http": {"static_headers": {"X-A": "1"}}}}},
  "rpc": {"proxy": {"endpoint": "http://b/rpc"}, "without_namespace": {"proxy_enabled": true}},
  "channel": {"without_namespace": {"publish_proxy_enabled": true, "publish_proxy_name": "default"},
              "proxy": {"publish": {"endpoint": "http://b/publish", "include_connection_meta": true}}}
}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	names = map[string]ProxyEndpointConfig{}
	for _, p := range cfg.Proxies {
		names[p.Name] = p
	}
	if cfg.Client.Proxy.Connect != "" || cfg.Client.Proxy.Refresh != "client.proxy.refresh" || names["client.proxy.refresh"].Timeout != 3*time.Second ||
		names["client.proxy.refresh"].StaticHTTPHeaders["X-A"] != "1" || cfg.RPC.Proxy != "rpc.proxy" || names["rpc.proxy"].URL != "http://b/rpc" ||
		cfg.Channel.WithoutNamespace.PublishProxy != "channel.proxy.publish" || !names["channel.proxy.publish"].IncludeConnectionMeta || len(cfg.Proxies) != 3 {
		t.Errorf("proxies: %+v %+v %+v", cfg.Client.Proxy, cfg.RPC, cfg.Proxies)
	}
}

// TestCentrifugoRefusedKeysNameThemselves: every key Herald cannot honour
// is refused with its own name and a note, never dropped.
func TestCentrifugoRefusedKeysNameThemselves(t *testing.T) {
	for _, n := range newCFTables().rows {
		value := any("not-a-default")
		if n.writes() || n.takes(value) {
			continue // mapped, or every value changes nothing (prometheus.enabled)
		}
		tree := treeWith(n.Key, value)
		if sec, rest, ok := strings.Cut(n.Key, "."); ok && (sec == "broker" || sec == "presence_manager") {
			// Centrifugo reads these sections only when enabled, the
			// type naming the subsection the key is in.
			s := tree[sec].(map[string]any)
			s["enabled"], s["type"] = true, strings.Split(rest, ".")[0]
		}
		_, ps, report := mapCentrifugoReport(tree)
		want := strings.ReplaceAll(n.Key, "[]", "[0]")
		if n.Action == cfTune {
			// Taken, and named as not needed.
			if hasProblem(ps, want, "") || !slices.Contains(report.NotNeeded, want) {
				t.Errorf("%s: %v, not needed %v, want it taken and named as not needed", n.Key, ps, report.NotNeeded)
			}
			continue
		}
		if !hasProblem(ps, want, n.Note) {
			t.Errorf("%s: %v, want a problem for %s saying %q", n.Key, ps, want, n.Note)
		}
	}
	for key, msg := range map[string]string{
		"channel.namespaces[].subscribe_proxy_enabled": "refers to the proxy of channel.proxy.subscribe",
		"consumers[].no_such":                          "not a Centrifugo v6 option that Herald knows",
		"http_server.port":                             "want a port number",
		"client.proxy.connect.enabled":                 "",
		"engine.redis.address":                         "want host:port or a redis:// URL",
	} {
		var value any = true
		if key == "http_server.port" || key == "engine.redis.address" {
			value = "ftp://x"
		}
		want := strings.ReplaceAll(key, "[]", "[0]")
		if key == "client.proxy.connect.enabled" {
			want, msg = "client.proxy.connect.endpoint", "required"
		}
		_, ps := mapCentrifugo(treeWith(key, value))
		if !hasProblem(ps, want, msg) {
			t.Errorf("%s: %v, want a problem for %s saying %q", key, ps, want, msg)
		}
	}
	// A duration without a unit: nanoseconds to Centrifugo, seconds to
	// Herald; neither meaning is guessed.
	_, ps := mapCentrifugo(map[string]any{"channel": map[string]any{"namespaces": []any{map[string]any{"name": "ns", "history_ttl": int64(300)}}}})
	if !hasProblem(ps, "channel.namespaces[0].history_ttl", `write the duration with a unit, such as "300s"`) {
		t.Errorf("bare number duration: %v", ps)
	}
	if _, err := ParseCentrifugo([]byte("{}"), "c.json", []string{"CENTRIFUGO_CLIENT_PING_INTERVAL=25"}); err == nil ||
		!strings.Contains(err.Error(), `CENTRIFUGO_CLIENT_PING_INTERVAL: (for client.ping_interval) "25": want a duration with a unit`) {
		t.Errorf("bare number duration in the environment: %v", err)
	}
	// A key Centrifugo does not have either is not refused (Centrifugo
	// warns and starts): it is reported, with the nearest key, Herald's or
	// Centrifugo's, when one is near.
	for key, want := range map[string]string{
		"client.tokn": `"client.token"`, "http_servr": `"http_server"`, "client.alowed_origins": `"client.allowed_origins"`,
		"engine.redis.presense_ttl": `"engine.redis.presence_ttl"`, "no_such_section": "", "client.no_such_key": "",
		"channel.namespaces[].no_such": "", "channel.namespaces[].presense": `"channel.namespaces[0].presence"`,
	} {
		_, ps, report := mapCentrifugoReport(treeWith(key, "x"))
		path := strings.ReplaceAll(key, "[]", "[0]")
		if hasProblem(ps, path, "") {
			t.Errorf("%s: refused: %v", key, ps)
		}
		msg := "unknown key"
		if want != "" {
			msg = "did you mean " + want
		}
		if !hasProblem(report.Unknown, path, msg) {
			t.Errorf("%s: %v, want a warning saying %s", key, report.Unknown, msg)
		}
	}
	// Several addresses: shards, in Herald as in Centrifugo.
	out, ps := mapCentrifugo(map[string]any{"engine": map[string]any{"type": "redis", "redis": map[string]any{"address": []any{"a:1", "redis://b:2"}}}})
	if len(ps) > 0 {
		t.Errorf("two redis addresses: %v", ps)
	}
	if got := fmt.Sprint(out["engine"].(map[string]any)["redis"].(map[string]any)["address"]); got != "[a:1 b:2]" {
		t.Errorf("two redis addresses: engine.redis.address %s, want [a:1 b:2]", got)
	}
}

// treeWith builds a Centrifugo tree with one key set; "[]" is a list of one
// item named "x".
func treeWith(key string, v any) map[string]any {
	root := map[string]any{}
	cur := root
	parts := strings.Split(key, ".")
	for i, p := range parts {
		last := i == len(parts)-1
		if name, ok := strings.CutSuffix(p, "[]"); ok {
			item := map[string]any{"name": "x"}
			cur[name] = []any{item}
			cur = item
			continue
		}
		if last {
			cur[p] = v
			break
		}
		next := map[string]any{}
		cur[p] = next
		cur = next
	}
	return root
}

func hasProblem(ps Problems, key, msg string) bool {
	for _, p := range ps {
		if p.Key == key && strings.Contains(p.Message, msg) {
			return true
		}
	}
	return false
}

func TestCentrifugoEnv(t *testing.T) {
	env := []string{
		"CENTRIFUGO_CLIENT_TOKEN_HMAC_SECRET_KEY=from-env",
		"CENTRIFUGO_CLIENT_ALLOWED_ORIGINS=https://a.example https://b.example",
		"CENTRIFUGO_HTTP_SERVER_PORT=9100",
		"CENTRIFUGO_HTTP_API_KEY=api",
		"CENTRIFUGO_ADMIN_ENABLED=true",
		"CENTRIFUGO_ADMIN_PASSWORD=password1",
		"CENTRIFUGO_CHANNEL_NAMESPACES=[{\"name\": \"chat-room\", \"presence\": true}, {\"name\": \"bb\"}]",
		"CENTRIFUGO_CHANNEL_NAMESPACES_CHAT_ROOM_HISTORY_SIZE=10",
		"CENTRIFUGO_CHANNEL_NAMESPACES_CHAT_ROOM_HISTORY_TTL=60s",
		"CENTRIFUGO_CHANNEL_WITHOUT_NAMESPACE_ALLOW_SUBSCRIBE_FOR_CLIENT=1",
		"CENTRIFUGO_CLIENT_PROXY_CONNECT_ENABLED=true",
		"CENTRIFUGO_CLIENT_PROXY_CONNECT_ENDPOINT=http://backend/connect",
		"CENTRIFUGO_CLIENT_PROXY_CONNECT_HTTP_HEADERS=Cookie Authorization",
		"CENTRIFUGO_PROXIES=[{\"name\": \"p1\", \"endpoint\": \"http://backend/p1\"}]",
		"CENTRIFUGO_PROXIES_P1_TIMEOUT=2s",
		"CENTRIFUGO_PROXIES_P1_HTTP_STATIC_HEADERS={\"X-Key\": \"v\"}",
		"CENTRIFUGO_PROMETHEUS_ENABLED=true",
		"HERALD_NOT_MINE=1",
	}
	// The variables override the file.
	cfg, err := ParseCentrifugo(readTestdata(t, "genconfig.json"), "genconfig.json", env)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Client.Token.HMACSecretKey != "from-env" || strings.Join(cfg.WebSocket.AllowedOrigins, ",") != "https://a.example,https://b.example" ||
		cfg.Address != ":9100" || cfg.HTTPAPI.Key != "api" || !cfg.Admin.UI.Enabled || cfg.Admin.UI.Password != "password1" ||
		!cfg.Channel.WithoutNamespace.AllowSubscribeForClient {
		t.Errorf("env: %+v %v %q %+v", cfg.Client.Token, cfg.WebSocket.AllowedOrigins, cfg.Address, cfg.Admin.UI)
	}
	if len(cfg.Channel.Namespaces) != 2 || cfg.Channel.Namespaces[0].Name != "chat-room" || !cfg.Channel.Namespaces[0].Presence ||
		cfg.Channel.Namespaces[0].HistorySize != 10 || cfg.Channel.Namespaces[0].HistoryTTL != time.Minute {
		t.Errorf("namespaces: %+v", cfg.Channel.Namespaces)
	}
	names := map[string]ProxyEndpointConfig{}
	for _, p := range cfg.Proxies {
		names[p.Name] = p
	}
	if cfg.Client.Proxy.Connect != "client.proxy.connect" || names["client.proxy.connect"].URL != "http://backend/connect" ||
		len(names["client.proxy.connect"].HTTPHeaders) != 2 || names["p1"].Timeout != 2*time.Second || names["p1"].StaticHTTPHeaders["X-Key"] != "v" {
		t.Errorf("proxies: %+v", cfg.Proxies)
	}
	// The environment alone makes a configuration.
	cfg, format, err := LoadFile("", FormatAuto, env)
	if err != nil || format != FormatCentrifugo || cfg.Client.Token.HMACSecretKey != "from-env" {
		t.Errorf("environment only: %v %q %v", err, format, cfg.Client.Token)
	}
	// A list of objects is JSON, its keys mapped as a file's.
	cfg, err = ParseCentrifugo([]byte("{}"), "c.json", []string{`CENTRIFUGO_PROXIES=[{"name": "p", "endpoint": "http://127.0.0.1:1/", "emulated_headers": ["X-A"]}]`})
	if err != nil || len(cfg.Proxies) != 1 || !slices.Equal(cfg.Proxies[0].EmulatedHeaders, []string{"X-A"}) {
		t.Errorf("CENTRIFUGO_PROXIES with emulated_headers: %v %+v", err, cfg.Proxies)
	}
	// Bad values and unknown variables are refused, by name.
	for v, want := range map[string]string{
		"CENTRIFUGO_ADMIN_ENABLED=maybe":       `CENTRIFUGO_ADMIN_ENABLED: (for admin.enabled) "maybe": want true or false`,
		"CENTRIFUGO_CLIENT_CHANNEL_LIMIT=many": `CENTRIFUGO_CLIENT_CHANNEL_LIMIT: (for client.channel_limit) "many": want a whole number`,
		"CENTRIFUGO_CHANNEL_NAMESPACES={}":     "CENTRIFUGO_CHANNEL_NAMESPACES: want a JSON array",
	} {
		_, err := ParseCentrifugo([]byte("{}"), "c.json", []string{v})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", v, err, want)
		}
	}
}

// TestCentrifugoConvertRoundTrip: the converted file is a Herald file
// that reads back as the same configuration, and is not taken for a
// Centrifugo one.
func TestCentrifugoConvertRoundTrip(t *testing.T) {
	for _, name := range []string{"genconfig.json", "genconfig.toml", "quickstart.json", "proxy.json", "named_proxies.json", "namespaces.json", "redis.json"} {
		out, err := ConvertCentrifugo(readTestdata(t, name), name, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if IsCentrifugo(out, "herald.yaml") {
			t.Errorf("%s: the converted file is detected as Centrifugo's:\n%s", name, out)
		}
		cfg, err := Parse(out)
		if err != nil {
			t.Fatalf("%s: converted:\n%s\n%v", name, out, err)
		}
		if want := parseCentrifugo(t, name); !reflect.DeepEqual(cfg, want) {
			t.Errorf("%s: the converted file reads differently", name)
		}
	}
}

// TestCentrifugoTLS: the listener's TLS object with file paths, and ACME.
func TestCentrifugoTLS(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{"http_server": {"port": 443, "tls": {"enabled": true, "cert_pem": "/etc/c.pem", "key_pem": "/etc/k.pem", "client_ca_pem": "/etc/ca.pem", "server_name": "x"}}}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TLS.CertFile != "/etc/c.pem" || cfg.TLS.KeyFile != "/etc/k.pem" || cfg.TLS.ClientCAFile != "/etc/ca.pem" || cfg.TLS.ClientAuth != "require" || cfg.Address != ":443" {
		t.Errorf("tls: %+v %q", cfg.TLS, cfg.Address)
	}
	// Not enabled: not used, as in Centrifugo.
	cfg, err = ParseCentrifugo([]byte(`{"http_server": {"tls": {"enabled": false, "cert_pem": "/etc/c.pem"}}}`), "c.json", nil)
	if err != nil || cfg.TLS.CertFile != "" {
		t.Errorf("disabled tls: %v %+v", err, cfg.TLS)
	}
	// Inline PEM: TestCentrifugoInlinePEM.
	cfg, err = ParseCentrifugo([]byte(`{"http_server": {"tls_autocert": {"enabled": true, "host_whitelist": ["rt.example.com"], "cache_dir": "/var/cache/acme", "email": "ops@example.com", "http": true, "http_addr": ":8080"}}}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.TLSAutocert; !a.Enabled || strings.Join(a.HostWhitelist, ",") != "rt.example.com" || a.CacheDir != "/var/cache/acme" || a.Email != "ops@example.com" || a.HTTPAddress != ":8080" {
		t.Errorf("autocert: %+v", a)
	}
	cfg, err = ParseCentrifugo([]byte(`{}`), "c.json", []string{"CENTRIFUGO_HTTP_SERVER_TLS_ENABLED=true", "CENTRIFUGO_HTTP_SERVER_TLS_CERT_PEM=/c", "CENTRIFUGO_HTTP_SERVER_TLS_KEY_PEM=/k", "CENTRIFUGO_HTTP_SERVER_TLS_AUTOCERT_EMAIL=a@b"})
	if err != nil || cfg.TLS.CertFile != "/c" || cfg.TLS.KeyFile != "/k" || cfg.TLSAutocert.Email != "a@b" {
		t.Errorf("tls from the environment: %v %+v", err, cfg.TLS)
	}
	// The gRPC listeners take Centrifugo's TLS object too (they used to be
	// refused key by key: cert_pem is not a key of Herald's TLS options).
	cfg, err = ParseCentrifugo([]byte(`{"grpc_api": {"tls": {"enabled": true, "cert_pem": "/g/c.pem", "key_pem": "/g/k.pem"}}, "uni_grpc": {"tls": {"enabled": true, "cert_pem_file": "/u/c.pem", "key_pem_file": "/u/k.pem", "client_ca_pem": "/u/ca.pem"}}}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if g, u := cfg.GRPCAPIConfig.TLS, cfg.UniGRPC.TLS; g.CertFile != "/g/c.pem" || g.KeyFile != "/g/k.pem" || u.CertFile != "/u/c.pem" || u.KeyFile != "/u/k.pem" || u.ClientCAFile != "/u/ca.pem" || u.ClientAuth != "require" {
		t.Errorf("gRPC listeners' tls: %+v %+v", g, u)
	}
	cfg, err = ParseCentrifugo([]byte(`{}`), "c.json", []string{"CENTRIFUGO_GRPC_API_TLS_ENABLED=true", "CENTRIFUGO_GRPC_API_TLS_CERT_PEM=/c", "CENTRIFUGO_GRPC_API_TLS_KEY_PEM=/k"})
	if err != nil || cfg.GRPCAPIConfig.TLS.CertFile != "/c" || cfg.GRPCAPIConfig.TLS.KeyFile != "/k" {
		t.Errorf("grpc_api tls from the environment: %v %+v", err, cfg.GRPCAPIConfig.TLS)
	}
}

// TestLoadFileFormats: detection, the format flag, and the hint when a
// Centrifugo file is read as Herald's.
func TestLoadFileFormats(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cf := write("config.yaml", "client:\n  allowed_origins: ['https://a.example']\n")
	if cfg, format, err := LoadFile(cf, FormatAuto, nil); err != nil || format != FormatCentrifugo || cfg.WebSocket.AllowedOrigins[0] != "https://a.example" {
		t.Errorf("auto: %v %q", err, format)
	}
	_, _, err := LoadFile(cf, FormatHerald, nil)
	if err == nil || !strings.Contains(err.Error(), "--config-format centrifugo reads") || !strings.Contains(err.Error(), "client.allowed_origins: unknown key") {
		t.Errorf("herald: %v", err)
	}
	herald := write("herald.yaml", "client:\n  insecure: true\n")
	if cfg, format, err := LoadFile(herald, FormatAuto, []string{"CENTRIFUGO_CLIENT_INSECURE=false"}); err != nil || format != FormatHerald || !cfg.Client.Insecure {
		t.Errorf("a Herald file ignores CENTRIFUGO_ variables: %v %q %v", err, format, cfg.Client.Insecure)
	}
	if cfg, format, err := LoadFile(herald, FormatCentrifugo, nil); err != nil || format != FormatCentrifugo || !cfg.Client.Insecure || cfg.SSE.Enabled {
		t.Errorf("forced centrifugo: %v %q", err, format)
	}
	if _, _, err := LoadFile("", FormatAuto, nil); err != nil {
		t.Errorf("no file: %v", err)
	}
	if _, _, err := LoadFile(herald, "xml", nil); err == nil || !strings.Contains(err.Error(), `config format "xml"`) {
		t.Errorf("bad format: %v", err)
	}
}

// TestCentrifugoTOMLTables: namespaces and proxies as TOML arrays of
// tables read as the JSON lists do.
func TestCentrifugoTOMLTables(t *testing.T) {
	toml := `
[client.token]
hmac_secret_key = "s"

[[proxies]]
name = "subscribe1"
endpoint = "http://localhost:3001/centrifugo/subscribe"
timeout = "2s"

[[channel.namespaces]]
name = "feed"
presence = true
history_size = 10
history_ttl = "300s"
subscribe_proxy_enabled = true
subscribe_proxy_name = "subscribe1"
`
	json := `{"client": {"token": {"hmac_secret_key": "s"}},
  "proxies": [{"name": "subscribe1", "endpoint": "http://localhost:3001/centrifugo/subscribe", "timeout": "2s"}],
  "channel": {"namespaces": [{"name": "feed", "presence": true, "history_size": 10, "history_ttl": "300s",
                              "subscribe_proxy_enabled": true, "subscribe_proxy_name": "subscribe1"}]}}`
	fromTOML, err := ParseCentrifugo([]byte(toml), "config.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := ParseCentrifugo([]byte(json), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromTOML, fromJSON) {
		t.Errorf("TOML and JSON differ:\n%+v\n%+v", fromTOML.Channel.Namespaces, fromJSON.Channel.Namespaces)
	}
	if ns := fromTOML.Channel.Namespaces[0]; ns.HistorySize != 10 || ns.HistoryTTL != 300*time.Second || ns.SubscribeProxy != "subscribe1" || fromTOML.Proxies[0].Timeout != 2*time.Second {
		t.Errorf("TOML: %+v %+v", ns, fromTOML.Proxies)
	}
}

// TestCentrifugoMapProxies: a map namespace's map.publish_proxy_enabled
// and map.remove_proxy_enabled (with map.*_proxy_name) name Herald's
// map_publish_proxy and map_remove_proxy: the proxy of
// channel.proxy.map_publish when unnamed, or the named one of proxies.
func TestCentrifugoMapProxies(t *testing.T) {
	file := `{"http_api":{"key":"k"},"client":{"token":{"hmac_secret_key":"s"}},
 "proxies":[{"name":"rm","endpoint":"http://127.0.0.1:9/rm"}],
 "channel":{"proxy":{"map_publish":{"endpoint":"http://127.0.0.1:9/mp"}},
  "namespaces":[{"name":"mm","subscription_type":"map","map":{"mode":"ephemeral","key_ttl":"60s",
    "publish_proxy_enabled":true,"remove_proxy_enabled":true,"remove_proxy_name":"rm"}}]}}`
	cfg, err := ParseCentrifugo([]byte(file), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ns := cfg.Channel.Namespaces[0]
	if ns.MapPublishProxy != "channel.proxy.map_publish" || ns.MapRemoveProxy != "rm" {
		t.Fatalf("map_publish_proxy %q, map_remove_proxy %q; want channel.proxy.map_publish and rm", ns.MapPublishProxy, ns.MapRemoveProxy)
	}
	var endpoint string
	for _, p := range cfg.Proxies {
		if p.Name == "channel.proxy.map_publish" {
			endpoint = p.URL
		}
	}
	if endpoint != "http://127.0.0.1:9/mp" {
		t.Fatalf("proxy channel.proxy.map_publish: endpoint %q", endpoint)
	}
}
