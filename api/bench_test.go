package api_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
)

// inProcessHandler is the API handler of a started hub, mounted under
// /api/ as the server does, for calls without a network.
func inProcessHandler(b testing.TB) http.Handler {
	b.Helper()
	h := startHub(b, hub.Config{Engine: memory.New(memory.Config{}), Channels: testChannels()})
	a, err := api.NewHandler(h, api.Config{Key: testKey})
	if err != nil {
		b.Fatal(err)
	}
	return http.StripPrefix("/api", a)
}

// rewindBody is a request body that can be read again, so that one
// request serves every iteration.
type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }

// discardWriter is a ResponseWriter that keeps nothing, to measure the
// handler alone.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }

func benchmarkPublish(b *testing.B, ch string) {
	payload := []byte(`{"channel":"` + ch + `","data":{"text":"hello, world","n":12345},"tags":{"kind":"chat"}}`)
	b.Run("recorder", func(b *testing.B) {
		h := inProcessHandler(b)
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodPost, "/api/publish", bytes.NewReader(payload))
			req.Header.Set("X-API-Key", testKey)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || !bytes.HasPrefix(rec.Body.Bytes(), []byte(`{"result":`)) {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
	})
	b.Run("handler-only", func(b *testing.B) {
		h := inProcessHandler(b)
		body := &rewindBody{}
		req := httptest.NewRequest(http.MethodPost, "/api/publish", body)
		req.Header.Set("X-API-Key", testKey)
		req.ContentLength = int64(len(payload))
		w := &discardWriter{h: make(http.Header)}
		b.ReportAllocs()
		for b.Loop() {
			body.Reset(payload)
			r := *req
			h.ServeHTTP(w, &r)
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
		}
	})
}

// BenchmarkPublish publishes through the handler to a channel without
// history (delivery only) and to one with history.
func BenchmarkPublish(b *testing.B) {
	b.Run("no-history", func(b *testing.B) { benchmarkPublish(b, "plain:bench") })
	b.Run("history", func(b *testing.B) { benchmarkPublish(b, "bench") })
}
