package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
)

func TestAuth(t *testing.T) {
	n := startNode(t, api.Config{})
	info := n.apiURL + "/info"
	cases := []struct {
		name   string
		url    string
		header []string
		want   int
	}{
		{"no key", info, nil, http.StatusUnauthorized},
		{"X-API-Key", info, []string{"X-API-Key", testKey}, http.StatusOK},
		{"wrong X-API-Key", info, []string{"X-API-Key", "nope"}, http.StatusUnauthorized},
		{"key prefix", info, []string{"X-API-Key", testKey[:4]}, http.StatusUnauthorized},
		{"Authorization apikey", info, []string{"Authorization", "apikey " + testKey}, http.StatusOK},
		{"Authorization scheme case", info, []string{"Authorization", "ApiKey " + testKey}, http.StatusOK},
		{"Authorization upper", info, []string{"Authorization", "APIKEY " + testKey}, http.StatusOK},
		{"Authorization wrong key", info, []string{"Authorization", "apikey nope"}, http.StatusUnauthorized},
		{"Authorization bearer", info, []string{"Authorization", "Bearer " + testKey}, http.StatusUnauthorized},
		{"Authorization no scheme", info, []string{"Authorization", testKey}, http.StatusUnauthorized},
		// A key in the URL ends up in access logs and browser history, so
		// the query is not looked at unless AllowKeyInQuery (see
		// TestKeyInQuery).
		{"query", info + "?api_key=" + testKey, nil, http.StatusUnauthorized},
		{"wrong header, right query", info + "?api_key=" + testKey, []string{"X-API-Key", "nope"}, http.StatusUnauthorized},
		{"X-API-Key wins over Authorization", info, []string{"X-API-Key", "nope", "Authorization", "apikey " + testKey}, http.StatusUnauthorized},
		// Authentication comes before everything else: unauthenticated
		// callers learn nothing about methods.
		{"no key, GET", info, nil, http.StatusUnauthorized},
		{"no key, unknown method", n.apiURL + "/nope", nil, http.StatusUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := http.MethodPost
			if strings.Contains(c.name, "GET") {
				method = http.MethodGet
			}
			r := n.doRaw(t, method, c.url, `{}`, c.header...)
			if r.status != c.want {
				t.Fatalf("status %d, want %d (body %q)", r.status, c.want, r.body)
			}
			if r.status == http.StatusUnauthorized && r.body != "" {
				t.Fatalf("401 must be bare, got body %q", r.body)
			}
		})
	}
}

// TestKeyInQuery: with AllowKeyInQuery the api_key query parameter is
// tried after the headers, as in Centrifugo.
func TestKeyInQuery(t *testing.T) {
	n := startNode(t, api.Config{AllowKeyInQuery: true})
	info := n.apiURL + "/info"
	for _, c := range []struct {
		name   string
		url    string
		header []string
		want   int
	}{
		{"query", info + "?api_key=" + testKey, nil, http.StatusOK},
		{"wrong query", info + "?api_key=nope", nil, http.StatusUnauthorized},
		// A present X-API-Key is the header that counts; the query is
		// still tried when it fails.
		{"wrong header, right query", info + "?api_key=" + testKey, []string{"X-API-Key", "nope"}, http.StatusOK},
		{"header still works", info, []string{"X-API-Key", testKey}, http.StatusOK},
	} {
		if r := n.doRaw(t, http.MethodPost, c.url, `{}`, c.header...); r.status != c.want {
			t.Errorf("%s: status %d, want %d", c.name, r.status, c.want)
		}
	}
}

func TestInsecure(t *testing.T) {
	n := startNode(t, api.Config{Insecure: true})
	if r := n.doRaw(t, http.MethodPost, n.apiURL+"/info", `{}`); r.status != http.StatusOK {
		t.Fatalf("insecure: status %d", r.status)
	}
}

func TestNewHandlerConfig(t *testing.T) {
	h, err := hub.New(hub.Config{Engine: memory.New(memory.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  api.Config
		want string
	}{
		{"no key", api.Config{}, "Key is required"},
		{"bad error mode", api.Config{Key: "k", ErrorMode: "http"}, `ErrorMode: "http"`},
		{"negative body size", api.Config{Key: "k", MaxBodySize: -1}, "MaxBodySize: -1"},
		{"negative body read timeout", api.Config{Key: "k", BodyReadTimeout: -1}, "BodyReadTimeout: -1ns"},
		{"negative batch limit", api.Config{Key: "k", MaxBatchCommands: -1}, "MaxBatchCommands: -1"},
		{"negative batch response size", api.Config{Key: "k", MaxBatchResponseSize: -1}, "MaxBatchResponseSize: -1"},
	} {
		if _, err := api.NewHandler(h, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
	// Validate names every bad field, as Go fields (a configuration layer
	// translates them to its keys), and leaves a missing key to NewHandler.
	err = api.Config{ErrorMode: "http", MaxBodySize: -1, BodyReadTimeout: -1, MaxBatchCommands: -1, MaxBatchResponseSize: -1}.Validate()
	var fields []string
	for _, oe := range hub.OptionErrors(err) {
		fields = append(fields, oe.Field)
	}
	if want := []string{"ErrorMode", "MaxBodySize", "BodyReadTimeout", "MaxBatchCommands", "MaxBatchResponseSize"}; !slices.Equal(fields, want) {
		t.Errorf("Validate: fields %q (%v), want %q", fields, err, want)
	}
	if err := (api.Config{}).Validate(); err != nil {
		t.Errorf("Validate of the zero Config: %v", err)
	}
	if _, err := api.NewHandler(nil, api.Config{Key: "k"}); err == nil {
		t.Error("nil hub: want an error")
	}
	if _, err := api.NewHandler(h, api.Config{Key: "k", ErrorMode: api.ErrorModeTransport}); err != nil {
		t.Errorf("transport mode: %v", err)
	}
}
