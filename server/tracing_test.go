package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/otlptest"
)

// TestTracingEndToEnd: a node with opentelemetry.enabled exports, to a
// real OTLP receiver named by the OTEL_* variables, an API request's span
// under the caller's traceparent with the engine publish under it, a
// batch's commands under the batch, and a proxy call whose traceparent,
// as the backend received it, names the exported proxy span.
func TestTracingEndToEnd(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.HTTPEndpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	var (
		mu          sync.Mutex
		traceparent string
	)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparent = r.Header.Get("Traceparent")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"result":{"data":{"ok":true}}}`)
	}))
	t.Cleanup(backend.Close)
	cfg, err := config.Parse([]byte(`
opentelemetry:
  enabled: true
http_api:
  key: k
channel:
  without_namespace:
    history_size: 10
    history_ttl: 60s
proxies:
  - name: app
    endpoint: ` + backend.URL + `/rpc
rpc:
  proxy: app
`))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})

	// An API publish continuing the caller's trace.
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+"/api/publish", strings.NewReader(`{"channel":"news","data":{"n":1}}`))
	req.Header.Set("X-API-Key", "k")
	req.Header.Set("Traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"result"`) {
		t.Fatalf("publish: %s", body)
	}
	spans := rcv.Await(t, func(s []otlptest.Span) bool {
		return otlptest.Find(s, "engine.Publish") != nil && otlptest.Find(s, "api.publish") != nil
	})
	api, pub := otlptest.Find(spans, "api.publish"), otlptest.Find(spans, "engine.Publish")
	if api.TraceID != callerTrace || api.ParentSpanID != callerSpan {
		t.Errorf("api.publish (trace %s, parent %s) does not continue the caller's traceparent", api.TraceID, api.ParentSpanID)
	}
	if pub.TraceID != callerTrace || pub.ParentSpanID != api.SpanID {
		t.Errorf("engine.Publish (trace %s, parent %s) is not under api.publish %s", pub.TraceID, pub.ParentSpanID, api.SpanID)
	}
	if api.Service != "herald" || pub.Attributes["herald.channel"] != "news" {
		t.Errorf("service %q, channel %q", api.Service, pub.Attributes["herald.channel"])
	}

	// A batch: each command a child of the batch, its engine call under it.
	if got := apiCall(t, s, "batch", `{"commands":[{"publish":{"channel":"b","data":{}}},{"history":{"channel":"b","limit":1}}]}`); !strings.Contains(got, `"replies"`) {
		t.Fatalf("batch: %s", got)
	}
	spans = rcv.Await(t, func(s []otlptest.Span) bool {
		return otlptest.Find(s, "engine.History") != nil && otlptest.Find(s, "api.batch") != nil
	})
	batch, hist := otlptest.Find(spans, "api.batch"), otlptest.Find(spans, "engine.History")
	var batchPublish, batchHistory *otlptest.Span
	for i := range spans {
		if spans[i].ParentSpanID == batch.SpanID {
			switch spans[i].Name {
			case "api.publish":
				batchPublish = &spans[i]
			case "api.history":
				batchHistory = &spans[i]
			}
		}
	}
	if batchPublish == nil || batchHistory == nil {
		t.Fatalf("batch commands are not children of api.batch: %+v", spans)
	}
	if hist.ParentSpanID != batchHistory.SpanID || hist.TraceID != batch.TraceID {
		t.Errorf("engine.History is not under the batch's api.history")
	}

	// A proxy call: the backend gets the exported span's trace context.
	c := connectClient(t, s, "ann")
	if got := jsonclient.Compact(t, c.Call(`{"id":2,"rpc":{"method":"m","data":{}}}`)); !strings.Contains(got, `"ok":true`) {
		t.Fatalf("rpc: %s", got)
	}
	spans = rcv.Await(t, func(s []otlptest.Span) bool { return otlptest.Find(s, "proxy.rpc") != nil })
	px := otlptest.Find(spans, "proxy.rpc")
	mu.Lock()
	tp := traceparent
	mu.Unlock()
	if want := "00-" + px.TraceID + "-" + px.SpanID + "-01"; tp != want {
		t.Errorf("backend got traceparent %q, want the proxy span's %q", tp, want)
	}
	if px.Attributes["herald.proxy.name"] != "app" {
		t.Errorf("proxy span attributes: %v", px.Attributes)
	}

	// The engine behind the tracing wrapper still answers readiness.
	r, err := http.Get("http://" + s.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready map[string]any
	_ = json.NewDecoder(r.Body).Decode(&ready)
	r.Body.Close()
	if r.StatusCode != http.StatusOK || ready["status"] != "ready" {
		t.Errorf("readyz %d %v", r.StatusCode, ready)
	}
}

// TestTracingBadProtocol: a wrong OTEL_EXPORTER_OTLP_PROTOCOL stops the
// node at start, naming the variable.
func TestTracingBadProtocol(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon")
	cfg := config.Default()
	cfg.OpenTelemetry.Enabled = true
	_, err := New(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "opentelemetry") || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Fatalf("err = %v", err)
	}
}
