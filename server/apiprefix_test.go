package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
)

// post sends body to path on s with the test key; it returns the status
// and the body.
func post(t *testing.T, s *Server, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+s.Addr()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", "k")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// TestAPIPrefixAndSingleEndpoint: the API is served under
// http_api.handler_prefix, both as PREFIX/<method> and as the single
// endpoint PREFIX with {"method","params"}; nothing is left at /api.
func TestAPIPrefixAndSingleEndpoint(t *testing.T) {
	for _, prefix := range []string{"", "/centrifugo/api/"} {
		t.Run(prefix, func(t *testing.T) {
			cfg := config.Default()
			cfg.HTTPAPI.Key = "k"
			cfg.HTTPAPI.HandlerPrefix = prefix
			s := startServer(t, cfg)
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			p := cfg.HTTPAPI.Prefix()
			if code, body := post(t, s, p+"/info", `{}`); code != http.StatusOK || !strings.Contains(body, `"nodes":[`) {
				t.Fatalf("POST %s/info: %d %s", p, code, body)
			}
			for _, path := range []string{p, p + "/"} {
				code, body := post(t, s, path, `{"id":3,"method":"info","params":{}}`)
				if code != http.StatusOK || !strings.HasPrefix(body, `{"id":3,"result":{"nodes":[`) {
					t.Fatalf("POST %s: %d %s", path, code, body)
				}
			}
			if p != "/api" {
				if code, body := post(t, s, "/api/info", `{}`); code != http.StatusNotFound {
					t.Fatalf("POST /api/info with prefix %s: %d %s", p, code, body)
				}
			}
		})
	}
}

// TestAPIDisabled: with http_api.disabled nothing answers under the
// prefix, not even the 403 that explains how to turn the API on.
func TestAPIDisabled(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.HTTPAPI.Disabled = true
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	for _, path := range []string{"/api", "/api/publish"} {
		if code, body := post(t, s, path, `{"channel":"chat","data":1}`); code != http.StatusNotFound {
			t.Fatalf("POST %s: %d %s", path, code, body)
		}
	}
}
