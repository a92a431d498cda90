package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
)

// TestIdempotencyKeysFull: when the memory engine holds as many
// idempotency keys within their window as it may, a publish with a new key
// is answered error 111 saying why, a repeat of a held key is
// still answered, and a publish without a key still works.
func TestIdempotencyKeysFull(t *testing.T) {
	h := startHub(t, hub.Config{Engine: memory.New(memory.Config{IdempotencyKeys: 2}), Channels: testChannels()})
	a, err := api.NewHandler(h, api.Config{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	call := func(body string) string {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/publish", strings.NewReader(body))
		req.Header.Set("X-API-Key", testKey)
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		return rec.Body.String()
	}
	first := call(`{"channel":"chat","data":1,"idempotency_key":"a"}`)
	call(`{"channel":"chat","data":2,"idempotency_key":"b"}`)
	got := call(`{"channel":"chat","data":3,"idempotency_key":"c"}`)
	if !strings.Contains(got, `"code":111`) || !strings.Contains(got, "idempotency keys") {
		t.Fatalf("a third key: %s, want error 111 about idempotency keys", got)
	}
	if again := call(`{"channel":"chat","data":1,"idempotency_key":"a"}`); again != first {
		t.Fatalf("repeat of a held key: %s, want %s", again, first)
	}
	if plain := call(`{"channel":"chat","data":4}`); !strings.Contains(plain, `"result"`) {
		t.Fatalf("publish without a key: %s", plain)
	}
}
