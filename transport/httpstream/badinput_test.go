package httpstream

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/protocol"
)

func TestEmulationBadInput(t *testing.T) {
	e := newEnv(t, Config{Emulation: EmulationOptions{MaxRequestBodySize: 1024}}, nil)
	cs := e.open(http.MethodPost, pathHTTPStream, "application/json", connectAndSubscribe(t, protocol.TypeJSON))
	session, node := checkSession(t, e, cs)
	cmd := commands(t, protocol.TypeJSON, &protocol.Command{Id: 3, Subscribe: &protocol.SubscribeRequest{Channel: "x"}})
	for _, tt := range []struct {
		name        string
		contentType string
		body        []byte
		status      int
		says        string // in the answer
	}{
		{"empty body", "application/json", nil, 400, "empty body"},
		{"not JSON", "application/json", []byte(`{"session":`), 400, "not a JSON object"},
		{"JSON array", "application/json", []byte(`[1,2]`), 400, "not a JSON object"},
		{"data not a string", "application/json", []byte(`{"session":"` + session + `","data":{"id":1}}`), 400, "data: want a JSON string"},
		{"no data", "application/json", []byte(`{"session":"` + session + `"}`), 400, "data: want a JSON string"},
		{"empty data", "application/json", []byte(`{"session":"` + session + `","data":""}`), 400, "data: no commands"},
		{"no session", "application/json", emulationJSONBody(t, "", node, cmd), 400, "session: missing"},
		{"not Protobuf", ContentTypeProtobuf, []byte{0xff, 0xff, 0xff}, 400, "not a Protobuf EmulationRequest"},
		{"unknown session", "application/json", emulationJSONBody(t, "no-such-session", node, cmd), 404, "unknown emulation session"},
		{"unknown node", "application/json", emulationJSONBody(t, session, "no-such-node", cmd), 404, "unknown node"},
		{"oversize", "application/json", emulationJSONBody(t, session, node, bytes.Repeat([]byte(" "), 2000)), 413, "larger than 1024 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := e.emulate(tt.contentType, tt.body)
			if code != tt.status || !strings.Contains(body, tt.says) {
				t.Fatalf("%d %q, want %d saying %q", code, body, tt.status, tt.says)
			}
		})
	}
	// None of that touched the session.
	if code, body := e.emulate("application/json", emulationJSONBody(t, session, node, cmd)); code != http.StatusNoContent {
		t.Fatalf("emulation after the bad ones: %d %s", code, body)
	}
	if r := cs.reply(); r.Id != 3 || r.Error != nil {
		t.Fatalf("reply %+v, want the subscribe result", r)
	}
	if code, _ := get(t, e.hs.URL+pathEmulation); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /emulation: %d, want 405", code)
	}
}

func TestStreamBadInput(t *testing.T) {
	e := newEnv(t, Config{StreamOptions: StreamOptions{MaxRequestBodySize: 512}}, nil)
	big := commands(t, protocol.TypeJSON, &protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Token: strings.Repeat("x", 600)}})
	for _, tt := range []struct {
		name, path string
		body       []byte
		status     int
		says       string
	}{
		{"http_stream empty", pathHTTPStream, nil, 400, "empty body"},
		{"http_stream oversize", pathHTTPStream, big, 413, "larger than 512 bytes"},
		{"sse oversize", pathSSE, big, 413, "larger than 512 bytes"},
		{"sse empty", pathSSE, nil, 400, "no connect command"},
		{"uni_http_stream not JSON", pathUniHTTPStream, []byte(`{"token":`), 400, "not valid JSON"},
		{"uni_http_stream a command", pathUniHTTPStream, []byte(`[{"id":1}]`), 400, "want a connect request"},
		{"uni_sse oversize", pathUniSSE, bytes.Repeat([]byte(" "), 600), 413, "larger than 512 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(t, e.hs.URL+tt.path, "application/json", tt.body)
			if code != tt.status || !strings.Contains(body, tt.says) {
				t.Fatalf("%d %q, want %d saying %q", code, body, tt.status, tt.says)
			}
		})
	}
	for _, tt := range []struct {
		path   string
		status int
	}{
		{pathHTTPStream, 405},
		{pathUniHTTPStream, 405},
		{pathSSE, 400}, // no cf_connect
		{pathSSE + "?cf_connect=" + strings.Repeat("x", 600), 413},
		{pathUniSSE + "?cf_connect=%7B", 400}, // "{"
	} {
		if code, body := get(t, e.hs.URL+tt.path); code != tt.status {
			t.Errorf("GET %.60s: %d %q, want %d", tt.path, code, body, tt.status)
		}
	}
	// A malformed first command opens the stream, which then closes with
	// 3501 as a WebSocket would.
	cs := e.open(http.MethodPost, pathHTTPStream, "application/json", []byte(`{"id":1,"connect":`))
	r := cs.reply()
	if r.Push == nil || r.Push.Disconnect == nil || r.Push.Disconnect.Code != uint32(protocol.DisconnectBadRequest) {
		t.Fatalf("reply %+v, want a disconnect push 3501", r)
	}
	cs.expectEOF()
	await(t, "the hub to forget the client", func() bool { return e.hub.NumPending() == 0 })
}

func TestCORS(t *testing.T) {
	e := newEnv(t, Config{CheckOrigin: func(r *http.Request) bool {
		o := r.Header.Get("Origin")
		return o == "" || o == "http://app.example"
	}}, nil)
	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequestWithContext(ctxFor(t, 5*time.Second), http.MethodOptions, e.hs.URL+pathEmulation, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type")
		req.Close = true
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := preflight("http://app.example")
	h := resp.Header
	if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "http://app.example" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || !strings.EqualFold(h.Get("Access-Control-Allow-Headers"), "content-type") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, h)
	}
	if resp := preflight("http://evil.example"); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight from a refused origin: %d %v, want 403 without CORS headers", resp.StatusCode, resp.Header)
	}
	// The stream itself carries the headers the page needs to read it.
	req, _ := http.NewRequestWithContext(ctxFor(t, 5*time.Second), http.MethodPost, e.hs.URL+pathHTTPStream,
		bytes.NewReader(connectAndSubscribe(t, protocol.TypeJSON)))
	req.Header.Set("Origin", "http://app.example")
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "http://app.example" || resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("stream headers %v, want CORS for http://app.example", resp.Header)
	}
	cs := &clientStream{t: t, resp: resp, rd: newReader(resp), cancel: func() {}, proto: protocol.TypeJSON}
	checkSession(t, e, cs)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxFor(t, 10*time.Second), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}
