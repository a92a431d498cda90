package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
)

// init.enabled serves Centrifugo's connection init endpoint on the main
// listener, also when an internal listener takes the operators' endpoints.
func TestConnInit(t *testing.T) {
	do := func(s *Server, method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+s.Addr()+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	off := startServer(t, config.Default())
	defer shutdownServer(t, off)
	if code, _ := do(off, http.MethodGet, "/connection/init"); code != http.StatusNotFound {
		t.Errorf("off: %d", code)
	}

	cfg := config.Default()
	cfg.Init = config.InitConfig{Enabled: true, HandlerPrefix: "/pre/init/"}
	cfg.Internal.Address = "127.0.0.1:0"
	on := startServer(t, cfg)
	defer shutdownServer(t, on)
	if code, body := do(on, http.MethodGet, "/pre/init"); code != http.StatusOK || strings.TrimSpace(body) != "{}" {
		t.Errorf("GET: %d %q", code, body)
	}
	if code, _ := do(on, http.MethodPost, "/pre/init"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", code)
	}
}
