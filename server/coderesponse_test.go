package server

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/transport/httpstream"
)

// TestUniSSEConnectCodeToHTTPResponse: with uni_sse
// connect_code_to_http_response a refused connect is answered with the
// configured HTTP status (the disconnect's reason as the body when the
// transform has none) instead of a stream; an unmatched code gets 500; a
// good token still gets the stream. client.connect_code_to_unidirectional_disconnect
// changes the disconnect uni_http_stream carries.

func TestUniSSEConnectCodeToHTTPResponse(t *testing.T) {
	cfg := config.Default()
	cfg.UniSSE.Enabled = true
	cfg.UniHTTPStream.Enabled = true
	cfg.UniSSE.ConnectCodeToHTTPResponse = httpstream.CodeToHTTPResponse{Enabled: true, Transforms: []httpstream.CodeToHTTPResponseTransform{
		{Code: 3500, To: httpstream.HTTPResponseTo{StatusCode: http.StatusUnauthorized}},
		{Code: 3501, To: httpstream.HTTPResponseTo{StatusCode: http.StatusForbidden, Body: "go away"}},
	}}
	cfg.Client.ConnectCodeToUnidirectionalDisconnect = hub.UniDisconnectTransforms{Enabled: true, Transforms: []hub.UniDisconnectTransform{
		{Code: 109, To: hub.DisconnectTransformTo{Code: 4409, Reason: "expired here"}},
	}}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	get := func(connect string) (*http.Response, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+s.Addr()+UniSSEPath+"?cf_connect="+url.QueryEscape(connect), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			line, _ := bufio.NewReader(resp.Body).ReadString('\n')
			resp.Body.Close()
			return resp, line
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get(`{"token":"not a token"}`)
	if resp.StatusCode != http.StatusUnauthorized || body != "invalid token" {
		t.Errorf("bad token: %d %q, want 401 with the disconnect's reason", resp.StatusCode, body)
	}
	resp, body = get(`{"token":"` + token(t, "alice") + `"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"connect"`) {
		t.Errorf("good token: %d %q, want 200 and the connect push", resp.StatusCode, body)
	}

	resp, body = get(`{}`)
	if resp.StatusCode != http.StatusForbidden || body != "go away" {
		t.Errorf("no token: %d %q, want 403 with the configured body", resp.StatusCode, body)
	}
	// An expired token is error 109: no transform for it, so 500.
	expired := testtoken.Connect(t, "secret", auth.ConnectClaims{User: "alice", ExpiresAt: time.Now().Add(-time.Minute)})
	resp, body = get(`{"token":"` + expired + `"}`)
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("no transform for the code: %d %q, want 500", resp.StatusCode, body)
	}

	// The uni HTTP stream has no HTTP transforms: it streams the
	// disconnect, which client.connect_code_to_unidirectional_disconnect
	// chooses for error 109 (3005 without it).
	post, err := http.Post("http://"+s.Addr()+UniHTTPStreamPath, "application/json", strings.NewReader(`{"token":"`+expired+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer post.Body.Close()
	line, _ := bufio.NewReader(post.Body).ReadString('\n')
	if post.StatusCode != http.StatusOK || !strings.Contains(line, `{"disconnect":{"code":4409,"reason":"expired here"}`) {
		t.Errorf("uni_http_stream: %d %q, want 200 and the transformed disconnect 4409", post.StatusCode, line)
	}
}
