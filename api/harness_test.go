package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/websocket"
)

const (
	testSecret = "test-secret"
	testKey    = "test-api-key"
)

// testChannels: channels without a namespace keep history and presence
// and anyone may subscribe; "plain:" channels have neither; "big:"
// channels keep 5,000 publications.
func testChannels() hub.ChannelConfig {
	return hub.ChannelConfig{
		WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true,
			Presence:                true,
			HistorySize:             100,
			HistoryTTL:              5 * time.Minute,
		},
		Namespaces: []hub.Namespace{
			{Name: "plain", NamespaceOptions: hub.NamespaceOptions{AllowSubscribeForClient: true}},
			{Name: "strict", NamespaceOptions: hub.NamespaceOptions{AllowSubscribeForClient: true, ChannelRegex: `^[a-z]+$`}},
			{Name: "bin", NamespaceOptions: hub.NamespaceOptions{HistorySize: 100, HistoryTTL: 5 * time.Minute, PublicationDataFormat: hub.DataFormatBinary}},
			{Name: "big", NamespaceOptions: hub.NamespaceOptions{AllowSubscribeForClient: true, Presence: true, HistorySize: 5000, HistoryTTL: 5 * time.Minute}},
			{Name: "board", NamespaceOptions: hub.NamespaceOptions{SubscriptionType: hub.SubscriptionMap, Map: hub.MapOptions{Mode: hub.MapPersistent, MinPageSize: 1, MaxPageSize: 500}}},
		},
	}
}

// node is a hub with the WebSocket transport at /connection/websocket
// and the API at /api/, as the server mounts them, on loopback.
type node struct {
	hub    *hub.Hub
	srv    *httptest.Server
	wsURL  string
	apiURL string
}

// startHub starts a hub with cfg and shuts it down when the test ends, for
// tests that call the API handler in process.
func startHub(tb testing.TB, cfg hub.Config) *hub.Hub {
	tb.Helper()
	return hubtest.Start(tb, cfg)
}

// startNode starts a node whose API uses cfg (with the test key unless
// cfg sets Key or Insecure) and stops it when the test ends.
func startNode(t testing.TB, cfg api.Config) *node {
	t.Helper()
	if cfg.Key == "" && !cfg.Insecure {
		cfg.Key = testKey
	}
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}), Name: "test-node", Version: "1.2.3",
		Channels: testChannels(), Tokens: v,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	apiHandler, err := api.NewHandler(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// HERALD_TEST_WS_POLLER selects the transport's poller, as in every
	// package whose tests go through it.
	wsCfg := websocket.Config{Poller: websocket.Poller(testenv.WebSocketPoller())}
	ws, err := websocket.NewServer(wsCfg, func(c *websocket.Conn, r *http.Request) websocket.Receiver {
		return h.NewClient(c, c.RemoteAddr())
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/connection/websocket", ws)
	mux.Handle("/api/", http.StripPrefix("/api", apiHandler))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("hub shutdown: %v", err)
		}
		if err := ws.Close(); err != nil {
			t.Errorf("websocket close: %v", err)
		}
	})
	return &node{
		hub: h, srv: srv,
		wsURL:  "ws" + strings.TrimPrefix(srv.URL, "http") + "/connection/websocket",
		apiURL: srv.URL + "/api",
	}
}

// response is an answered API request.
type response struct {
	status int
	header http.Header
	body   string
}

// json decodes the body.
func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("response %d %q is not a JSON object: %v", r.status, r.body, err)
	}
	return m
}

// do sends an API request with the test key in X-API-Key.
func (n *node) do(t testing.TB, httpMethod, method, body string, header ...string) response {
	t.Helper()
	return n.doRaw(t, httpMethod, n.apiURL+"/"+method, body, append([]string{"X-API-Key", testKey}, header...)...)
}

// doRaw sends a request to url with exactly the given header pairs.
func (n *node) doRaw(t testing.TB, httpMethod, url, body string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(httpMethod, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := n.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", httpMethod, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

// call POSTs body to method, requires HTTP 200, and returns the body.
func (n *node) call(t testing.TB, method, body string, header ...string) string {
	t.Helper()
	r := n.do(t, http.MethodPost, method, body, header...)
	if r.status != http.StatusOK {
		t.Fatalf("%s %s: status %d, body %q", method, body, r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s: Content-Type %q", method, ct)
	}
	return r.body
}

// expect POSTs body to method and requires exactly the answer want.
func (n *node) expect(t testing.TB, method, body, want string) {
	t.Helper()
	if got := n.call(t, method, body); got != want {
		t.Fatalf("%s %s:\n got %s\nwant %s", method, body, got, want)
	}
}

// expectError POSTs body to method and requires error code in the
// default error mode; it returns the message.
func (n *node) expectError(t testing.TB, method, body string, code int) string {
	t.Helper()
	m := (response{status: 200, body: n.call(t, method, body)}).json(t)
	e, ok := m["error"].(map[string]any)
	if !ok || len(m) != 1 {
		t.Fatalf("%s %s: want error %d, got %v", method, body, code, m)
	}
	if got := int(e["code"].(float64)); got != code {
		t.Fatalf("%s %s: want error %d, got %v", method, body, code, e)
	}
	return e["message"].(string)
}

// wsClient is the shared JSON protocol client (internal/test/jsonclient) over
// a real WebSocket connection, connected.
type wsClient struct {
	*jsonclient.Client
	t  testing.TB
	id string // client id from the connect reply
}

// dial connects to n as user and returns the connected client.
func (n *node) dial(t testing.TB, user string) *wsClient {
	t.Helper()
	return n.dialWith(t, auth.ConnectClaims{User: user})
}

func (n *node) dialWith(t testing.TB, claims auth.ConnectClaims) *wsClient {
	t.Helper()
	c := jsonclient.New(t, wire.Dial(t, n.wsURL, protocol.TypeJSON), testSecret)
	res := c.ConnectToken(testtoken.Connect(t, testSecret, claims))
	return &wsClient{Client: c, t: t, id: res["client"].(string)}
}

// subscribe subscribes to ch and requires the reply next.
func (c *wsClient) subscribe(ch string) {
	c.t.Helper()
	c.Send(`{"id":2,"subscribe":{"channel":"` + ch + `"}}`)
	m := c.ReadOne()
	if _, ok := m["subscribe"]; !ok {
		c.t.Fatalf("subscribe %s: %v", ch, m)
	}
}

// expectOpen sends an rpc command and requires its reply next, proving
// the connection is still open and nothing was queued before the reply.
func (c *wsClient) expectOpen() {
	c.t.Helper()
	c.Send(`{"id":99,"rpc":{"method":"probe"}}`)
	if m := c.ReadOne(); m["id"] != float64(99) {
		c.t.Fatalf("want the reply to command 99, got %v", m)
	}
}

// epochOf returns the epoch of ch's stream, read with the history method.
func epochOf(t testing.TB, n *node, ch string) string {
	t.Helper()
	m := (response{body: n.call(t, "history", `{"channel":"`+ch+`"}`)}).json(t)
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("history of %s: %v", ch, m)
	}
	return res["epoch"].(string)
}
