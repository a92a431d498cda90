package main

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/servertest"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/server"
)

// The Centrifugo configuration files the tests carry, as Centrifugo's
// documentation gives them (config/testdata/centrifugo), each started as a
// node that real WebSocket clients and the HTTP API then use.

const (
	cfSecret = "bbe7d157-a253-4094-9759-06a8236543f9" // client.token.hmac_secret_key of genconfig and quickstart
	cfAPIKey = "d7627bb6-2292-4911-82e1-615c0ed3eebb" // http_api.key
)

// startCentrifugo starts a node from a Centrifugo file of the testdata
// with the CENTRIFUGO_ variables env, on a free loopback port (set the
// Centrifugo way, through CENTRIFUGO_HTTP_SERVER_*).
func startCentrifugo(t *testing.T, name string, env ...string) *server.Server {
	t.Helper()
	return startCentrifugoFile(t, filepath.Join("..", "..", "config", "testdata", "centrifugo", name), env...)
}

// startCentrifugoFile is startCentrifugo with the Centrifugo file at path.
func startCentrifugoFile(t *testing.T, path string, env ...string) *server.Server {
	t.Helper()
	name := filepath.Base(path)
	env = append(env, "CENTRIFUGO_HTTP_SERVER_ADDRESS=127.0.0.1", "CENTRIFUGO_HTTP_SERVER_PORT=0")
	cfg, format, err := config.LoadFile(path, config.FormatAuto, env)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if format != config.FormatCentrifugo {
		t.Fatalf("%s: read as %q", name, format)
	}
	cfg.Shutdown.DrainWindow = 10 * time.Millisecond
	if err := cfg.Validate(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return servertest.Start(t, cfg)
}

// dialCentrifugo opens a WebSocket connection as a browser on origin would.
func dialCentrifugo(t *testing.T, s *server.Server, origin string) *jsonclient.Client {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	conn := wire.DialWith(t, &gws.Dialer{HandshakeTimeout: 5 * time.Second}, "ws://"+s.Addr()+"/connection/websocket", h)
	return jsonclient.New(t, wire.WebSocket(conn, protocol.TypeJSON), cfSecret)
}

// apiPublish publishes over the HTTP API with the key, as the quickstart's curl does.
func apiPublish(t *testing.T, s *server.Server, key, channel, data string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+s.Addr()+"/api/publish", strings.NewReader(`{"channel":"`+channel+`","data":`+data+`}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"error"`) {
		t.Fatalf("publish: %d %s", resp.StatusCode, body)
	}
}

// awaitPublication reads until a publication on channel arrives and returns its data.
func awaitPublication(t *testing.T, c *jsonclient.Client, channel string) string {
	t.Helper()
	for {
		m := c.Next()
		if jsonclient.Path(m, "push", "channel") == channel {
			if pub, ok := jsonclient.Path(m, "push", "pub").(map[string]any); ok {
				return jsonclient.Compact(t, pub["data"])
			}
		}
	}
}

// TestCentrifugoQuickstart runs Centrifugo's quickstart tutorial against
// Herald: its configuration file unchanged, a client with a token from
// its secret on the allowed origin subscribes to "channel", and a publish
// over the API with its key reaches it. Another origin is refused, as the
// tutorial shows Centrifugo doing.
func TestCentrifugoQuickstart(t *testing.T) {
	s := startCentrifugo(t, "quickstart.json")
	c := dialCentrifugo(t, s, "http://localhost:3000")
	c.Connect("123722")
	c.MustSubscribe(2, "channel", "")
	apiPublish(t, s, cfAPIKey, "channel", `{"value":1}`)
	if got := awaitPublication(t, c, "channel"); got != `{"value":1}` {
		t.Errorf("publication: %s", got)
	}
	_, resp, err := gws.DefaultDialer.Dial("ws://"+s.Addr()+"/connection/websocket", http.Header{"Origin": {"http://elsewhere.example"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("an origin not in client.allowed_origins: %v %v", err, resp)
	}
	if resp != nil {
		resp.Body.Close()
	}
	// admin.enabled: the admin UI is served (under /admin in Herald).
	r, err := http.Get("http://" + s.Addr() + "/admin/")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Errorf("admin UI: %d", r.StatusCode)
	}
}

// TestCentrifugoGenconfig starts the file `centrifugo genconfig` writes,
// in each of its formats, with the one option the quickstart adds given
// as a CENTRIFUGO_ variable.
func TestCentrifugoGenconfig(t *testing.T) {
	for _, name := range []string{"genconfig.json", "genconfig.yaml", "genconfig.toml"} {
		t.Run(name, func(t *testing.T) {
			s := startCentrifugo(t, name, "CENTRIFUGO_CHANNEL_WITHOUT_NAMESPACE_ALLOW_SUBSCRIBE_FOR_CLIENT=true")
			c := dialCentrifugo(t, s, "")
			c.Connect("42")
			c.MustSubscribe(2, "news", "")
			apiPublish(t, s, cfAPIKey, "news", `{"n":`+`1}`)
			if got := awaitPublication(t, c, "news"); got != `{"n":1}` {
				t.Errorf("publication: %s", got)
			}
			// allowed_origins is empty: browsers from another origin are refused.
			_, resp, err := gws.DefaultDialer.Dial("ws://"+s.Addr()+"/connection/websocket", http.Header{"Origin": {"http://localhost:3000"}})
			if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Errorf("empty allowed_origins: %v", err)
			}
			if resp != nil {
				resp.Body.Close()
			}
		})
	}
}

// proxyBackend is an application backend answering Centrifugo's HTTP
// proxy requests, recording what it was asked.
type proxyBackend struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string][]map[string]any // path -> request bodies
	hdr map[string]http.Header
}

func newProxyBackend(t *testing.T) *proxyBackend {
	b := &proxyBackend{got: map[string][]map[string]any{}, hdr: map[string]http.Header{}}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		b.mu.Lock()
		b.got[r.URL.Path] = append(b.got[r.URL.Path], req)
		b.hdr[r.URL.Path] = r.Header.Clone()
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/connect"):
			_, _ = io.WriteString(w, `{"result":{"user":"56"}}`)
		case strings.HasSuffix(r.URL.Path, "/rpc"):
			_, _ = io.WriteString(w, `{"result":{"data":{"answer":"2019"}}}`)
		default:
			_, _ = io.WriteString(w, `{"result":{}}`)
		}
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *proxyBackend) calls(path string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got[path]
}

// TestCentrifugoProxyExample starts the connect and subscribe proxy
// examples of Centrifugo's proxy documentation, the endpoints pointed at
// a test backend with CENTRIFUGO_ variables: a client without a token is
// authenticated by the connect proxy (with its Cookie forwarded), and a
// subscription in namespace "sun" goes to the subscribe proxy.
func TestCentrifugoProxyExample(t *testing.T) {
	b := newProxyBackend(t)
	s := startCentrifugo(t, "proxy.json",
		"CENTRIFUGO_CLIENT_PROXY_CONNECT_ENDPOINT="+b.srv.URL+"/centrifugo/connect",
		"CENTRIFUGO_CHANNEL_PROXY_SUBSCRIBE_ENDPOINT="+b.srv.URL+"/centrifugo/subscribe",
		"CENTRIFUGO_HTTP_API_KEY="+cfAPIKey)
	h := http.Header{"Cookie": {"session=abc"}}
	conn := wire.DialWith(t, &gws.Dialer{HandshakeTimeout: 5 * time.Second}, "ws://"+s.Addr()+"/connection/websocket", h)
	c := jsonclient.New(t, wire.WebSocket(conn, protocol.TypeJSON), "")
	if m := c.ConnectWith(`{}`); jsonclient.Path(m, "connect", "client") == nil {
		t.Fatalf("connect through the proxy: %v", m)
	}
	if got := b.calls("/centrifugo/connect"); len(got) != 1 {
		t.Fatalf("connect proxy calls: %v", got)
	}
	b.mu.Lock()
	cookie := b.hdr["/centrifugo/connect"].Get("Cookie")
	b.mu.Unlock()
	if cookie != "session=abc" {
		t.Errorf("http_headers: Cookie forwarded as %q", cookie)
	}
	c.MustSubscribe(2, "sun:rays", "")
	if got := b.calls("/centrifugo/subscribe"); len(got) != 1 || got[0]["channel"] != "sun:rays" || got[0]["user"] != "56" {
		t.Fatalf("subscribe proxy calls: %v", got)
	}
	apiPublish(t, s, cfAPIKey, "sun:rays", `{"t":1}`)
	if got := awaitPublication(t, c, "sun:rays"); got != `{"t":1}` {
		t.Errorf("publication: %s", got)
	}
}

// TestCentrifugoNamedProxies starts the per-namespace proxy examples of
// Centrifugo's documentation: subscribe, publish and RPC in namespace ns1
// go to the proxies its options name.
func TestCentrifugoNamedProxies(t *testing.T) {
	b := newProxyBackend(t)
	s := startCentrifugo(t, "named_proxies.json",
		"CENTRIFUGO_PROXIES_SUBSCRIBE1_ENDPOINT="+b.srv.URL+"/subscribe1/subscribe",
		"CENTRIFUGO_PROXIES_PUBLISH1_ENDPOINT="+b.srv.URL+"/publish1/publish",
		"CENTRIFUGO_PROXIES_RPC1_ENDPOINT="+b.srv.URL+"/rpc1/rpc",
		"CENTRIFUGO_CLIENT_TOKEN_HMAC_SECRET_KEY="+cfSecret)
	c := dialCentrifugo(t, s, "")
	c.Connect("7")
	c.MustSubscribe(2, "ns1:a", "")
	if got := b.calls("/subscribe1/subscribe"); len(got) != 1 || got[0]["channel"] != "ns1:a" {
		t.Fatalf("subscribe1 calls: %v", got)
	}
	if m := c.Call(`{"id":3,"publish":{"channel":"ns1:a","data":{"x":1}}}`); m["error"] != nil {
		t.Fatalf("publish: %v", m)
	}
	if got := awaitPublication(t, c, "ns1:a"); got != `{"x":1}` {
		t.Errorf("publication: %s", got)
	}
	if got := b.calls("/publish1/publish"); len(got) != 1 || got[0]["channel"] != "ns1:a" {
		t.Fatalf("publish1 calls: %v", got)
	}
	m := c.Call(`{"id":4,"rpc":{"method":"ns1:price","data":{"object_id":12}}}`)
	if got := jsonclient.Compact(t, jsonclient.Path(m, "rpc", "data")); got != `{"answer":"2019"}` {
		t.Errorf("rpc: %v", m)
	}
	if got := b.calls("/rpc1/rpc"); len(got) != 1 || got[0]["method"] != "ns1:price" {
		t.Fatalf("rpc1 calls: %v", got)
	}
}

// TestConfigConvertCommand: `herald config convert` writes a file that
// `herald config check` accepts, reads the CENTRIFUGO_ environment, and
// names refused keys.
func TestConfigConvertCommand(t *testing.T) {
	src := filepath.Join("..", "..", "config", "testdata", "centrifugo", "quickstart.json")
	out, _, err := run(t, "config", "convert", src)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "allowed_origins:\n    - http://localhost:3000") || !strings.Contains(out, "token_secret: 4e9eafcf") {
		t.Errorf("converted:\n%s", out)
	}
	converted := writeFile(t, out)
	if got, _, err := run(t, "config", "check", converted); err != nil || !strings.HasSuffix(got, ": ok\n") {
		t.Errorf("check of the converted file: %q %v", got, err)
	}
	// The original checks too, detected or told.
	for _, args := range [][]string{{src}, {"--config-format", "centrifugo", src}} {
		if got, _, err := run(t, append([]string{"config", "check"}, args...)...); err != nil || !strings.HasSuffix(got, ": ok\n") {
			t.Errorf("check %v: %q %v", args, got, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "config.json")
	if err := writeTo(bad, `{"client": {"allowed_origins": []}, "engine": {"type": "redis", "redis": {"tls": {"enabled": true, "cert_pem": "-----BEGIN CERTIFICATE-----\\nnot PEM"}}}}`); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, "config", "convert", bad)
	for _, want := range []string{"engine.redis.tls.cert_pem: invalid PEM data: not a valid file path, base64-encoded PEM content, or raw PEM content"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("convert %s: %v, want %q", bad, err, want)
		}
	}
	if _, _, err := run(t, "config", "check", bad); err == nil || !strings.Contains(err.Error(), "cert_pem") {
		t.Errorf("check: %v", err)
	}
	// A Herald file is not converted unless told it is Centrifugo's.
	herald := writeFile(t, "client: {insecure: true}\n")
	if _, _, err := run(t, "config", "convert", herald); err == nil || !strings.Contains(err.Error(), "Herald configuration already") {
		t.Errorf("convert of a Herald file: %v", err)
	}
	if _, _, err := run(t, "config", "check", "--config-format", "toml", herald); err == nil || !strings.Contains(err.Error(), `config format "toml"`) {
		t.Errorf("bad --config-format: %v", err)
	}
}

func writeTo(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

// TestCentrifugoTLSListener: Centrifugo's http_server.tls serves WebSocket
// over TLS with its certificate given each way Centrifugo v6.9.1 takes it
// (internal/configtypes/pem.go): file paths, PEM text in the file, and
// base64-encoded PEM in CENTRIFUGO_HTTP_SERVER_TLS_CERT_PEM/KEY_PEM, as
// Kubernetes deployments pass it.
func TestCentrifugoTLSListener(t *testing.T) {
	ca := testcerts.NewCA(t, "cf-ca")
	pair := ca.Server("cf-server")
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	quote := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	b64 := func(name string) string { return base64.StdEncoding.EncodeToString([]byte(read(name))) }
	for _, tc := range []struct {
		name string
		tls  string
		env  []string
	}{
		{"files", `{"enabled": true, "cert_pem": ` + quote(pair.CertFile) + `, "key_pem": ` + quote(pair.KeyFile) + `}`, nil},
		{"raw PEM", `{"enabled": true, "cert_pem": ` + quote(read(pair.CertFile)) + `, "key_pem": ` + quote(read(pair.KeyFile)) + `}`, nil},
		{"base64 PEM from the environment", `{}`, []string{"CENTRIFUGO_HTTP_SERVER_TLS_ENABLED=true",
			"CENTRIFUGO_HTTP_SERVER_TLS_CERT_PEM=" + b64(pair.CertFile), "CENTRIFUGO_HTTP_SERVER_TLS_KEY_PEM=" + b64(pair.KeyFile)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			file := `{"client": {"token": {"hmac_secret_key": "` + cfSecret + `"}}, "channel": {"without_namespace": {"allow_subscribe_for_client": true}},
  "http_server": {"tls": ` + tc.tls + `}}`
			if err := writeTo(path, file); err != nil {
				t.Fatal(err)
			}
			s := startCentrifugoFile(t, path, tc.env...)
			d := &gws.Dialer{HandshakeTimeout: 5 * time.Second, TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}
			conn := wire.DialWith(t, d, "wss://"+s.Addr()+"/connection/websocket", nil)
			c := jsonclient.New(t, wire.WebSocket(conn, protocol.TypeJSON), cfSecret)
			c.Connect("1")
			c.MustSubscribe(2, "secure", "")
		})
	}
}

// TestServeCentrifugoFile runs `herald serve --config genconfig.toml`
// with a CENTRIFUGO_ variable, as a deployment would, and uses the node;
// a file with a key Herald cannot honour stops serve before it listens.
func TestServeCentrifugoFile(t *testing.T) {
	t.Setenv("CENTRIFUGO_CHANNEL_WITHOUT_NAMESPACE_ALLOW_SUBSCRIBE_FOR_CLIENT", "true")
	r := startServe(t, "--config", filepath.Join("..", "..", "config", "testdata", "centrifugo", "genconfig.toml"))
	out := r.waitFor(t, "herald listening")
	m := regexp.MustCompile(`msg="herald listening" address=(\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no address in:\n%s", out)
	}
	conn := wire.DialWith(t, &gws.Dialer{HandshakeTimeout: 5 * time.Second}, "ws://"+m[1]+"/connection/websocket", nil)
	c := jsonclient.New(t, wire.WebSocket(conn, protocol.TypeJSON), cfSecret)
	c.Connect("1")
	c.MustSubscribe(2, "from-serve", "")
	r.stop(t)

	bad := filepath.Join(t.TempDir(), "config.json")
	if err := writeTo(bad, `{"client": {"allowed_origins": []}, "broker": {"enabled": true, "type": "nats", "nats": {"raw_mode": {"enabled": true}}}}`); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "serve", "--config", bad)
	if err == nil || !strings.Contains(err.Error(), "broker.nats.raw_mode.enabled: Herald has no such option") {
		t.Errorf("serve with broker.nats.raw_mode.enabled: %v", err)
	}
	// Read as Herald's, the same file names Centrifugo's keys as unknown.
	_, _, err = run(t, "serve", "--config-format", "herald", "--config", bad)
	if err == nil || !strings.Contains(err.Error(), "client.allowed_origins: unknown key") {
		t.Errorf("serve --config-format herald: %v", err)
	}
}

// TestCentrifugoNamespacesExample starts the namespace example of
// Centrifugo's channels documentation (history, recovery, presence and
// publishing for subscribers in namespace feed): publications from the API
// and from a subscriber arrive, a client recovers them from the start of
// the stream, and presence and history answer.
func TestCentrifugoNamespacesExample(t *testing.T) {
	s := startCentrifugo(t, "namespaces.json")
	dial := func() *jsonclient.Client {
		conn := wire.DialWith(t, &gws.Dialer{HandshakeTimeout: 5 * time.Second}, "ws://"+s.Addr()+"/connection/websocket", nil)
		return jsonclient.New(t, wire.WebSocket(conn, protocol.TypeJSON), "my-secret-key")
	}
	a := dial()
	a.Connect("alice")
	sub := a.MustSubscribe(2, "feed:main", "")
	epoch, _ := sub["epoch"].(string)
	if sub["recoverable"] != true || epoch == "" {
		t.Fatalf("force_recovery: the subscription is not recoverable: %v", sub)
	}
	apiPublish(t, s, "secret-api-key", "feed:main", `{"n":1}`)
	if got := awaitPublication(t, a, "feed:main"); got != `{"n":1}` {
		t.Errorf("publication: %s", got)
	}
	if m := a.Call(`{"id":3,"publish":{"channel":"feed:main","data":{"n":2}}}`); m["error"] != nil {
		t.Fatalf("allow_publish_for_subscriber: %v", m)
	}
	if got := awaitPublication(t, a, "feed:main"); got != `{"n":2}` {
		t.Errorf("publication: %s", got)
	}
	if m := a.Call(`{"id":4,"presence":{"channel":"feed:main"}}`); !strings.Contains(jsonclient.Compact(t, m), `"user":"alice"`) {
		t.Errorf("presence: %v", m)
	}
	if m := a.Call(`{"id":5,"history":{"channel":"feed:main","limit":10}}`); len(jsonclient.Path(m, "history", "publications").([]any)) != 2 {
		t.Errorf("history: %v", m)
	}
	b := dial()
	b.Connect("bob")
	got := b.MustSubscribe(2, "feed:main", `"recover":true,"offset":0,"epoch":"`+epoch+`"`)
	if pubs, _ := got["publications"].([]any); got["recovered"] != true || len(pubs) != 2 {
		t.Errorf("recovery from the start of the stream: %v", got)
	}
}

// TestCentrifugoRedisCluster: two nodes started from one Centrifugo file
// with the Redis engine (Centrifugo's engine section, the address as a
// redis:// URL pointed at the test server by CENTRIFUGO_ENGINE_REDIS_ADDRESS)
// form a cluster: a publication over the API of one node reaches a client
// of the other, and the history kept in Redis answers on the first.
func TestCentrifugoRedisCluster(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	prefix := fmt.Sprintf("cfcfg%d", time.Now().UnixNano())
	env := []string{"CENTRIFUGO_ENGINE_REDIS_ADDRESS=redis://" + addr, "CENTRIFUGO_ENGINE_REDIS_PREFIX=" + prefix}
	n1 := startCentrifugo(t, "redis.json", env...)
	n2 := startCentrifugo(t, "redis.json", env...)
	c := dialCentrifugo(t, n1, "")
	c.Connect("1")
	c.MustSubscribe(2, "across", "")
	apiPublish(t, n2, cfAPIKey, "across", `{"from":2}`)
	if got := awaitPublication(t, c, "across"); got != `{"from":2}` {
		t.Errorf("publication through Redis: %s", got)
	}
	// The history the namespace options keep, published through node 2,
	// read through node 1's API.
	req, err := http.NewRequest(http.MethodPost, "http://"+n1.Addr()+"/api/history", strings.NewReader(`{"channel":"across","limit":10}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", cfAPIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply struct {
		Result struct {
			Publications []struct {
				Data json.RawMessage `json:"data"`
			} `json:"publications"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || len(reply.Result.Publications) != 1 || string(reply.Result.Publications[0].Data) != `{"from":2}` {
		t.Errorf("history through node 1: %v %+v", err, reply)
	}
}
