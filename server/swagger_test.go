package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
)

// TestSwaggerCallsEveryMethod: swagger.enabled serves the OpenAPI document
// and its page on the internal listener, and every method the document
// lists answers on the running API with one of the answers it documents
// (a result, an error, or the batch's replies); none is missing.
func TestSwaggerCallsEveryMethod(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Swagger.Enabled = true
	cfg.Internal.Address = "127.0.0.1:0"
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{HistorySize: 10, HistoryTTL: 60_000_000_000, Presence: true}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	internal := "http://" + s.InternalAddr()

	if code, _ := httpStatus(t, http.MethodGet, "http://"+s.Addr()+"/swagger/", ""); code != http.StatusNotFound {
		t.Errorf("public /swagger/: %d, want 404 (on the internal listener)", code)
	}
	code, page := httpStatus(t, http.MethodGet, internal+"/swagger/", "")
	if code != http.StatusOK || !strings.Contains(page, "openapi.json") || strings.Contains(page, "https://") {
		t.Fatalf("/swagger/: %d, want the page that loads openapi.json and nothing external", code)
	}
	code, raw := httpStatus(t, http.MethodGet, internal+"/swagger/openapi.json", "")
	if code != http.StatusOK {
		t.Fatalf("/swagger/openapi.json: %d", code)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") || len(doc.Paths) < 10 {
		t.Fatalf("openapi.json: %v, version %q, %d paths", err, doc.OpenAPI, len(doc.Paths))
	}
	for path, item := range doc.Paths {
		if _, ok := item["post"]; !ok {
			t.Errorf("%s: no POST operation", path)
			continue
		}
		body := `{"channel":"swagger","user":"u","client":"c","data":{},"channels":["swagger"],"method":"m","key":"k","commands":[]}`
		if path == "/api" {
			body = `{"method":"info","params":{}}`
		}
		code, answer := httpStatus(t, http.MethodPost, internal+path, body)
		if code != http.StatusOK {
			t.Errorf("POST %s: %d %s, want 200", path, code, answer)
			continue
		}
		var reply map[string]json.RawMessage
		if err := json.Unmarshal([]byte(strings.SplitN(answer, "\n", 2)[0]), &reply); err != nil {
			t.Errorf("POST %s: %q is not a JSON object", path, answer)
			continue
		}
		_, result := reply["result"]
		_, replies := reply["replies"]
		errMsg, failed := reply["error"]
		switch {
		case failed && strings.Contains(string(errMsg), `"code":404`):
			t.Errorf("POST %s: %s: the document lists a method the API does not have", path, errMsg)
		case !result && !replies && !failed && path != "/api":
			t.Errorf("POST %s: %s, want a result, an error or replies", path, answer)
		}
	}
}
