package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/proxy"
)

// counter reads herald_proxy_calls_total for proxy, event and result.
func counter(t *testing.T, r *proxy.Router, name, event, result string) float64 {
	t.Helper()
	for _, c := range r.Collectors() {
		if v, ok := c.(*prometheus.CounterVec); ok {
			return testutil.ToFloat64(v.WithLabelValues(name, event, result))
		}
	}
	t.Fatal("no calls counter among the router's collectors")
	return 0
}

// TestFaults: whatever goes wrong with the backend, the client gets error
// 100 (temporary), is not connected, and the call counts as failed.
func TestFaults(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the backend closes
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	cfg := fullConfig(b, func(e *proxy.Endpoint) { e.Timeout = 300 * time.Millisecond })
	cfg.Endpoints = append(cfg.Endpoints, proxy.Endpoint{Name: "down", URL: downURL + "/connect"})
	cfg.RPC = "down"
	n := startNode(t, cfg)

	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	cases := []struct {
		name   string
		handle http.HandlerFunc
	}{
		{"slow", slow},
		{"status 500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }},
		{"malformed JSON", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"result":{"user":`) }},
		{"unknown error code", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"error":{"code":5000,"message":"x"}}`)
		}},
		{"error code 0", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"error":{"code":0}}`) }},
		{"bad disconnect code", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"disconnect":{"code":200}}`) }},
		{"empty answer", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{}`) }},
		{"bad b64info", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"result":{"user":"u","b64info":"%%%"}}`)
		}},
	}
	for i, tc := range cases {
		b.handle("/connect", tc.handle)
		c := n.dial(nil)
		start := time.Now()
		m := c.Call(`{"id":1,"connect":{}}`)
		b.next()
		if jsonclient.Compact(t, m["error"]) != `{"code":100,"message":"internal server error","temporary":true}` {
			t.Fatalf("%s: want error 100, got %v", tc.name, m)
		}
		if tc.name == "slow" && time.Since(start) > 2*time.Second {
			t.Fatalf("slow: the timeout (300ms) did not end the call: %s", time.Since(start))
		}
		if c.c.User() != "" || n.hub.NumClients() != 0 {
			t.Fatalf("%s: the client is connected after a failed proxy call", tc.name)
		}
		if got := counter(t, n.router, "connect", "connect", "failed"); got != float64(i+1) {
			t.Fatalf("%s: failed calls counted %v, want %d", tc.name, got, i+1)
		}
	}

	// The backend recovers: a new connection is authenticated.
	c := n.dial(nil)
	c.connectOK(b, `{"user":"back"}`)
	if got := counter(t, n.router, "connect", "connect", "ok"); got != 1 {
		t.Fatalf("ok calls counted %v", got)
	}
	// A backend that is down.
	jsonclient.WantError(t, c.Call(`{"id":2,"rpc":{"method":"m"}}`), 100)
	if got := counter(t, n.router, "down", "rpc", "failed"); got != 1 {
		t.Fatalf("down: failed calls counted %v", got)
	}
	if c.c.User() != "back" {
		t.Fatal("a failed rpc changed the connection")
	}
}

// blocker is a backend handler that holds calls until released, and
// reports each call's arrival.
type blocker struct {
	arrived chan struct{}
	release chan struct{}
}

func newBlocker(t *testing.T) *blocker {
	bl := &blocker{arrived: make(chan struct{}, 64), release: make(chan struct{})}
	return bl
}

func (bl *blocker) handle(w http.ResponseWriter, r *http.Request) {
	bl.arrived <- struct{}{}
	select {
	case <-bl.release:
		_, _ = io.WriteString(w, `{"result":{"data":{"late":true}}}`)
	case <-r.Context().Done():
	}
}

func (bl *blocker) await(t *testing.T) {
	t.Helper()
	select {
	case <-bl.arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the blocked call did not reach the backend")
	}
}

// TestInFlightLimit: over proxy_max_in_flight, calls are refused at once
// with error 111 (temporary) and never reach the backend; when calls
// finish there is room again.
func TestInFlightLimit(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	bl := newBlocker(t)
	released := false
	t.Cleanup(func() {
		if !released {
			close(bl.release)
		}
	})
	cfg := fullConfig(b, nil)
	cfg.MaxInFlight = 2
	n := startNode(t, cfg)
	b.handle("/rpc", bl.handle)
	var held []*client
	for i := 0; i < 2; i++ {
		c := connected(t, n, b)
		c.Send(`{"id":2,"rpc":{"method":"slow"}}`)
		bl.await(t)
		b.next()
		held = append(held, c)
	}
	// Connects go through the same limit.
	c := n.dial(nil)
	start := time.Now()
	m := c.Call(`{"id":1,"connect":{}}`)
	if jsonclient.Compact(t, m["error"]) != `{"code":111,"message":"too many requests","temporary":true}` {
		t.Fatalf("over the limit: %v", m)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the refusal waited %s instead of answering at once", d)
	}
	b.noCall()
	if got := counter(t, n.router, "connect", "connect", "rejected"); got != 1 {
		t.Fatalf("rejected calls counted %v", got)
	}
	if got := gauge(t, n.router); got != 2 {
		t.Fatalf("in-flight gauge %v while two calls hang", got)
	}
	close(bl.release)
	released = true
	for _, h := range held {
		if m := h.Reply(2); jsonclient.Compact(t, m["rpc"]) != `{"data":{"late":true}}` {
			t.Fatalf("held rpc: %v", m)
		}
	}
	c2 := n.dial(nil)
	c2.connectOK(b, `{"user":"later"}`)
	if got := gauge(t, n.router); got != 0 {
		t.Fatalf("in-flight gauge %v after the calls ended", got)
	}
	if got := histogramCount(t, n.router, "rpc", "rpc"); got != 2 {
		t.Fatalf("rpc call durations observed %d, want 2", got)
	}
}

// gauge reads herald_proxy_in_flight.
func gauge(t *testing.T, r *proxy.Router) float64 {
	t.Helper()
	for _, c := range r.Collectors() {
		if g, ok := c.(prometheus.Gauge); ok {
			return testutil.ToFloat64(g)
		}
	}
	t.Fatal("no in-flight gauge among the router's collectors")
	return 0
}

// histogramCount reads how many durations herald_proxy_call_duration_seconds
// observed for proxy and event.
func histogramCount(t *testing.T, r *proxy.Router, name, event string) uint64 {
	t.Helper()
	for _, c := range r.Collectors() {
		if h, ok := c.(*prometheus.HistogramVec); ok {
			var m dto.Metric
			if err := h.WithLabelValues(name, event).(prometheus.Histogram).Write(&m); err != nil {
				t.Fatal(err)
			}
			return m.GetHistogram().GetSampleCount()
		}
	}
	t.Fatal("no duration histogram among the router's collectors")
	return 0
}

// TestSlowBackendHoldsOnlyItsClient: while one client's call hangs,
// another connects and gets its rpc answered.
func TestSlowBackendHoldsOnlyItsClient(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	bl := newBlocker(t)
	t.Cleanup(func() { close(bl.release) })
	cfg := fullConfig(b, nil)
	n := startNode(t, cfg)
	b.handle("/rpc_ns", bl.handle)
	stuck := connected(t, n, b)
	stuck.Send(`{"id":2,"rpc":{"method":"ns:hang"}}`)
	bl.await(t)
	b.next()

	other := connected(t, n, b)
	b.answer("/rpc", `{"result":{"data":"quick"}}`)
	if m := other.Call(`{"id":2,"rpc":{"method":"fast"}}`); jsonclient.Compact(t, m["rpc"]) != `{"data":"quick"}` {
		t.Fatalf("other client's rpc: %v", m)
	}
	b.next()
}
