package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestOffAnswersWhyAndHow(t *testing.T) {
	h := http.StripPrefix("/api", Off("set the key"))
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/api/publish", strings.NewReader(`{"channel":"c","data":{}}`)))
		if rec.Code != http.StatusForbidden {
			t.Fatalf("%s: status %d, want 403", method, rec.Code)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s: Content-Type %q", method, ct)
		}
		var reply struct {
			Error *Error `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &reply); err != nil || reply.Error == nil {
			t.Fatalf("%s: body %q: %v", method, rec.Body, err)
		}
		if reply.Error.Code != 108 || reply.Error.Message != "the HTTP API is off on this node: set the key" {
			t.Fatalf("%s: error %+v", method, *reply.Error)
		}
	}
}
