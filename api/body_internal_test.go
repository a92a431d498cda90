package api

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestReadBodyDoesNotTrustLength: a request that declares 1 GiB but
// sends a few bytes must not make the reader reserve the declared
// length: it grows its buffer as bytes arrive.
func TestReadBodyDoesNotTrustLength(t *testing.T) {
	const declared = 1 << 30
	req := httptest.NewRequest(http.MethodPost, "/publish", strings.NewReader(`{"channel":"c"}`))
	req.ContentLength = declared
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	body, err := readBody(req, nil, 2*declared)
	runtime.ReadMemStats(&after)
	if err != nil || string(body) != `{"channel":"c"}` {
		t.Fatalf("body %q, error %v", body, err)
	}
	// Other tests may allocate meanwhile, but nowhere near the declared
	// gigabyte.
	if got := after.TotalAlloc - before.TotalAlloc; got > declared/8 {
		t.Fatalf("reading a 15-byte body allocated %d bytes", got)
	}
}
