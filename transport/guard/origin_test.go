package guard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func originRequest(host, origin string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "http://"+host+"/", nil)
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	return r
}

func TestOrigins(t *testing.T) {
	listed := Origins([]string{"https://app.example/", "HTTP://Other.example:8080"})
	for _, tc := range []struct {
		check        func(*http.Request) bool
		name         string
		host, origin string
		want         bool
	}{
		{SameOrigin, "no Origin: not a browser", "h:1", "", true},
		{SameOrigin, "same host", "h:1", "http://h:1", true},
		{SameOrigin, "same host, other case", "H:1", "https://h:1", true},
		{SameOrigin, "other port", "h:1", "http://h:2", false},
		{SameOrigin, "unparsable", "h:1", "http://%zz", false},
		{listed, "same host still", "h:1", "http://h:1", true},
		{listed, "listed, trailing slash ignored", "h:1", "https://app.example", true},
		{listed, "listed, any case", "h:1", "http://other.example:8080", true},
		{listed, "not listed", "h:1", "https://evil.example", false},
		{Origins(nil), "none listed: same origin only", "h:1", "https://evil.example", false},
		{Origins([]string{"*"}), "any", "h:1", "https://evil.example", true},
		{Listed([]string{"https://app.example"}), "Listed: same host is not enough", "h:1", "http://h:1", false},
		{Listed([]string{"https://app.example"}), "Listed: no Origin", "h:1", "", false},
		{Listed([]string{"https://app.example"}), "Listed: listed", "h:1", "https://app.example", true},
	} {
		if got := tc.check(originRequest(tc.host, tc.origin)); got != tc.want {
			t.Errorf("%s (host %s, origin %q): %v, want %v", tc.name, tc.host, tc.origin, got, tc.want)
		}
	}
	if Listed(nil) != nil {
		t.Error("Listed(nil) must accept nothing (nil)")
	}
}

func TestCORS(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	serve := func(h http.Handler, method, origin string, hdr map[string]string) *httptest.ResponseRecorder {
		r := originRequest("h:1", origin)
		r.Method = method
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "X-Custom"}

	// The API's kind: listed origins only, fixed headers, others pass on.
	api := CORS{Allow: Listed([]string{"https://app.example"}), Methods: "POST", Headers: "Content-Type"}.Handler(next)
	w := serve(api, http.MethodOptions, "https://app.example", preflight)
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example" ||
		w.Header().Get("Access-Control-Allow-Headers") != "Content-Type" || w.Header().Get("Access-Control-Allow-Methods") != "POST" ||
		w.Header().Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("API preflight: %d %v", w.Code, w.Header())
	}
	if w := serve(api, http.MethodPost, "https://evil.example", nil); w.Code != http.StatusTeapot || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("API, other origin: %d %v, want passed on without CORS headers", w.Code, w.Header())
	}
	if h := (CORS{Methods: "POST"}).Handler(next); serve(h, http.MethodPost, "https://app.example", nil).Header().Get("Access-Control-Allow-Origin") != "" {
		t.Error("no Allow: CORS headers added")
	}

	// The HTTP transports' kind: refuse others, echo headers, credentials.
	tr := CORS{Allow: SameOrigin, Methods: "GET, POST, OPTIONS", Credentials: true, Refuse: true}.Handler(next)
	if w := serve(tr, http.MethodPost, "https://evil.example", nil); w.Code != http.StatusForbidden {
		t.Errorf("transport, other origin: %d, want 403", w.Code)
	}
	w = serve(tr, http.MethodOptions, "http://h:1", preflight)
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Headers") != "X-Custom" || w.Header().Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("transport preflight: %d %v", w.Code, w.Header())
	}
	if w := serve(tr, http.MethodOptions, "", nil); w.Code != http.StatusNoContent || w.Header().Get("Allow") != "GET, POST, OPTIONS" {
		t.Errorf("transport, plain OPTIONS: %d %v", w.Code, w.Header())
	}
	if w := serve(tr, http.MethodPost, "http://h:1", nil); w.Code != http.StatusTeapot || w.Header().Get("Vary") != "Origin" {
		t.Errorf("transport, same origin: %d %v", w.Code, w.Header())
	}
}
