package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/admin"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/protocol"
)

const (
	testPassword = "correct horse battery"
	testSecret   = "admin-token-secret-0123456789"
)

// env is a hub on the memory engine with the admin handler mounted under
// /admin/ on a loopback HTTP server.
type env struct {
	t   *testing.T
	hub *hub.Hub
	srv *httptest.Server
	// client keeps the login cookie.
	client *http.Client
	csrf   string
}

// startEnv starts a hub whose clients connect as the user their token
// names, with presence and history on every channel.
func startEnv(t *testing.T, cfg admin.Config, tls bool) *env {
	t.Helper()
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}), Name: "admin-test", Version: "9.9.9",
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, Presence: true, HistorySize: 100, HistoryTTL: time.Minute,
		}},
		Handlers: hub.Handlers{OnConnecting: func(_ context.Context, e hub.ConnectEvent) (hub.ConnectReply, error) {
			return hub.ConnectReply{User: e.Token}, nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg.CookiePath = "/admin/"
	a, err := admin.New(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/", http.StripPrefix("/admin", a))
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(mux)
	} else {
		srv = httptest.NewServer(mux)
	}
	jar, _ := cookiejar.New(nil)
	c := srv.Client()
	c.Jar = jar
	c.Timeout = 10 * time.Second
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("hub shutdown: %v", err)
		}
	})
	return &env{t: t, hub: h, srv: srv, client: c}
}

// do sends a request to /admin/path with body (JSON-encoded unless a
// string) and headers, and returns the status and body.
func (e *env) do(method, path string, body any, header map[string]string) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+"/admin/"+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}

// login logs in with the password and keeps the CSRF token.
func (e *env) login() {
	e.t.Helper()
	status, body := e.do("POST", "api/login", map[string]string{"password": testPassword}, nil)
	if status != 200 {
		e.t.Fatalf("login: %d %s", status, body)
	}
	var s struct{ CSRF string }
	if err := json.Unmarshal(body, &s); err != nil || s.CSRF == "" {
		e.t.Fatalf("login answer %s: %v", body, err)
	}
	e.csrf = s.CSRF
}

// call runs a server API method through the admin handler and decodes
// its answer.
func (e *env) call(method string, params any) map[string]any {
	e.t.Helper()
	status, body := e.do("POST", "api/call/"+method, params, map[string]string{admin.CSRFHeader: e.csrf})
	if status != 200 {
		e.t.Fatalf("call %s: %d %s", method, status, body)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		e.t.Fatalf("call %s: %s: %v", method, body, err)
	}
	if m["error"] != nil {
		e.t.Fatalf("call %s: error %v", method, m["error"])
	}
	r, _ := m["result"].(map[string]any)
	return r
}

// connectUser connects an in-memory client as user, subscribed to ch.
func (e *env) connectUser(user, ch string) *hubtest.Conn {
	e.t.Helper()
	conn, _ := hubtest.Dial(e.hub, protocol.TypeJSON)
	e.t.Cleanup(conn.Drop)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := conn.Send([]byte(`{"id":1,"connect":{"token":"` + user + `"}}`)); err != nil {
		e.t.Fatal(err)
	}
	if f, err := conn.Next(ctx); err != nil || !bytes.Contains(f, []byte(`"connect"`)) {
		e.t.Fatalf("connect %s: %s %v", user, f, err)
	}
	if err := conn.Send([]byte(`{"id":2,"subscribe":{"channel":"` + ch + `"}}`)); err != nil {
		e.t.Fatal(err)
	}
	if f, err := conn.Next(ctx); err != nil || !bytes.Contains(f, []byte(`"subscribe"`)) {
		e.t.Fatalf("subscribe %s: %s %v", user, f, err)
	}
	return conn
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
