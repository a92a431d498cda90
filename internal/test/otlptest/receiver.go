// Package otlptest is an OTLP trace receiver for tests: it takes spans
// over OTLP/HTTP (protobuf, at /v1/traces) and OTLP/gRPC on loopback, as
// a collector would, so that tests check what an exporter really sent.
package otlptest

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, its ids in hex as in a traceparent header.
type Span struct {
	Name         string
	TraceID      string
	SpanID       string
	ParentSpanID string // "" for a root span
	Attributes   map[string]string
	Service      string // the resource's service.name
	Protocol     string // "http" or "grpc": how it arrived
}

// Receiver collects the spans sent to it.
type Receiver struct {
	// HTTPEndpoint is the base URL for OTEL_EXPORTER_OTLP_ENDPOINT with
	// protocol http/protobuf; GRPCEndpoint the one for protocol grpc.
	HTTPEndpoint string
	GRPCEndpoint string

	mu      sync.Mutex
	spans   []Span
	changed chan struct{} // closed and replaced at each export
}

// Start starts a receiver on loopback, stopped when the test ends.
func Start(tb testing.TB) *Receiver {
	tb.Helper()
	r := &Receiver{changed: make(chan struct{})}
	hs := httptest.NewServer(http.HandlerFunc(r.serveHTTP))
	tb.Cleanup(hs.Close)
	r.HTTPEndpoint = hs.URL
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, grpcService{r: r})
	go func() { _ = gs.Serve(ln) }()
	tb.Cleanup(gs.Stop)
	r.GRPCEndpoint = "http://" + ln.Addr().String()
	return r
}

func (r *Receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var in coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &in); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.add(&in, "http")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

type grpcService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (s grpcService) Export(_ context.Context, in *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.r.add(in, "grpc")
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (r *Receiver) add(in *coltracepb.ExportTraceServiceRequest, protocol string) {
	var got []Span
	for _, rs := range in.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				attrs := make(map[string]string, len(sp.GetAttributes()))
				for _, kv := range sp.GetAttributes() {
					v := kv.GetValue()
					switch {
					case v.GetStringValue() != "":
						attrs[kv.GetKey()] = v.GetStringValue()
					default:
						attrs[kv.GetKey()] = v.String()
					}
				}
				parent := ""
				if len(sp.GetParentSpanId()) > 0 {
					parent = hex.EncodeToString(sp.GetParentSpanId())
				}
				got = append(got, Span{
					Name: sp.GetName(), TraceID: hex.EncodeToString(sp.GetTraceId()), SpanID: hex.EncodeToString(sp.GetSpanId()),
					ParentSpanID: parent, Attributes: attrs, Service: service, Protocol: protocol,
				})
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// Await returns the spans received once done says they are complete,
// failing the test after 10 s.
func (r *Receiver) Await(tb testing.TB, done func([]Span) bool) []Span {
	tb.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		r.mu.Lock()
		spans, changed := append([]Span(nil), r.spans...), r.changed
		r.mu.Unlock()
		if done(spans) {
			return spans
		}
		select {
		case <-changed:
		case <-timeout.C:
			tb.Fatalf("otlptest: spans incomplete after 10s; received %d: %+v", len(spans), spans)
			return nil
		}
	}
}

// Find returns the first span named name, or nil.
func Find(spans []Span, name string) *Span {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}
