package proxy

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// maxResponseSize bounds a backend's response body: a broken backend
// must not make the node read without end.
const maxResponseSize = 16 << 20

// endpoint is an Endpoint ready for calls.
type endpoint struct {
	Endpoint
	forward  []string // canonical names of the headers to forward
	emulated []string // canonical names of EmulatedHeaders
	r        *Router
	client   *http.Client  // the router's, or the endpoint's own for its TLS
	grpc     *grpcEndpoint // set for a grpc:// endpoint, which has no client
}

// callInfo is what a call needs from the client besides the body.
type callInfo struct {
	event    string
	clientID string
	header   map[string][]string // the client's HTTP request header
	emulated map[string]string   // connect's emulated headers (kept ones after connect)
}

// errInternal answers a call that got no usable answer: the protocol's
// internal error, temporary so that clients retry.
func errInternal() *hub.Error {
	return &hub.Error{Code: protocol.ErrorInternal, Message: protocol.ErrorInternal.Message(), Temporary: true}
}

// errTooMany answers a call refused by the in-flight limit.
func errTooMany() *hub.Error {
	return &hub.Error{Code: protocol.ErrorTooManyRequests, Message: protocol.ErrorTooManyRequests.Message(), Temporary: true}
}

// call sends req, decodes the response's envelope and converts its result
// (nil when the backend sent none) with conv. It returns conv's value, or
// the error for the client: the backend's error or disconnect, 111 when
// over the in-flight limit, 100 for any failure (logged with its cause),
// a result conv cannot use included.
func call[T, R any](ctx context.Context, e *endpoint, ci callInfo, req any, conv func(*T) (R, error)) (R, error) {
	var zero R
	m := e.r.metrics
	if !e.r.limit.acquire() {
		m.calls.WithLabelValues(e.Name, ci.event, resultRejected).Inc()
		return zero, errTooMany()
	}
	m.inFlight.Inc()
	start := time.Now()
	tctx, span := e.r.traceCall(ctx, e, ci)
	env, err := roundTrip[T](tctx, e, ci, req)
	endCall(span, env, err)
	m.duration.WithLabelValues(e.Name, ci.event).Observe(time.Since(start).Seconds())
	m.inFlight.Dec()
	e.r.limit.release()
	if err != nil {
		m.calls.WithLabelValues(e.Name, ci.event, resultFailed).Inc()
		e.r.log.Warn("proxy call failed", "proxy", e.Name, "event", ci.event, "client", ci.clientID, "error", err)
		return zero, errInternal()
	}
	// Disconnect first, then error, as Centrifugo reads them.
	if d := env.Disconnect; d != nil {
		if d.Code < 3000 || d.Code > 4999 {
			m.calls.WithLabelValues(e.Name, ci.event, resultFailed).Inc()
			e.r.log.Warn("proxy answered a disconnect code outside 3000-4999", "proxy", e.Name, "event", ci.event, "client", ci.clientID, "code", d.Code)
			return zero, errInternal()
		}
		m.calls.WithLabelValues(e.Name, ci.event, resultDisconnect).Inc()
		return zero, &hub.Disconnect{Code: d.Code, Reason: cut(d.Reason, MaxDisconnectReason)}
	}
	if pe := env.Error; pe != nil {
		if pe.Code < 100 || pe.Code > 1999 {
			m.calls.WithLabelValues(e.Name, ci.event, resultFailed).Inc()
			e.r.log.Warn("proxy answered an error code outside 100-1999", "proxy", e.Name, "event", ci.event, "client", ci.clientID, "code", pe.Code)
			return zero, errInternal()
		}
		m.calls.WithLabelValues(e.Name, ci.event, resultError).Inc()
		msg := pe.Message
		if msg == "" {
			msg = protocol.ErrorCode(pe.Code).Message()
		}
		return zero, &hub.Error{Code: protocol.ErrorCode(pe.Code), Message: cut(msg, MaxErrorMessage), Temporary: pe.Temporary}
	}
	out, err := conv(env.Result)
	if err != nil {
		m.calls.WithLabelValues(e.Name, ci.event, resultFailed).Inc()
		e.r.log.Warn("proxy result unusable", "proxy", e.Name, "event", ci.event, "client", ci.clientID, "error", err)
		return zero, errInternal()
	}
	m.calls.WithLabelValues(e.Name, ci.event, resultOK).Inc()
	return out, nil
}

// roundTrip sends req to e's backend, over HTTP or gRPC, and returns its
// answer; any error is a failure.
func roundTrip[T any](ctx context.Context, e *endpoint, ci callInfo, req any) (*envelope[T], error) {
	if e.grpc != nil {
		return grpcRoundTrip[T](ctx, e, ci, req)
	}
	return httpRoundTrip[T](ctx, e, ci, req)
}

// httpRoundTrip posts req and decodes the response.
func httpRoundTrip[T any](ctx context.Context, e *endpoint, ci callInfo, req any) (*envelope[T], error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout())
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	hr.Header = e.header(ci)
	e.r.injectTrace(ctx, hr.Header)
	resp, err := e.client.Do(hr)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within %s: %w", e.timeout(), err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Drain a little so the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if env := transformStatus[T](e.StatusToCodeTransforms, resp.StatusCode); env != nil {
			return env, nil
		}
		return nil, fmt.Errorf("backend answered HTTP status %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize+1))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if len(data) > maxResponseSize {
		return nil, fmt.Errorf("response larger than %d bytes", maxResponseSize)
	}
	var env envelope[T]
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("response is not the expected JSON: %w", err)
	}
	return &env, nil
}

// header builds a call's HTTP header: the forwarded headers of the
// client's HTTP request (for connect, its emulated headers fill in names
// the request lacks), then the static ones, which win. An endpoint with
// emulated_headers builds it as Centrifugo does instead (emulated.go).
func (e *endpoint) header(ci callInfo) http.Header {
	if len(e.emulated) > 0 {
		return e.headerWithEmulated(ci)
	}
	h := make(http.Header, len(e.forward)+len(e.StaticHTTPHeaders)+1)
	for _, name := range e.forward {
		if vs := ci.header[name]; len(vs) > 0 {
			h[name] = append([]string(nil), vs...)
			continue
		}
		if ci.event != eventConnect {
			continue
		}
		for k, v := range ci.emulated {
			if strings.EqualFold(k, name) {
				h.Set(name, v)
				break
			}
		}
	}
	for k, v := range e.StaticHTTPHeaders {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	return h
}

// base starts a request for client id.
func (e *endpoint) base(id, transport string, proto protocol.Type) baseRequest {
	enc := "json"
	if e.BinaryEncoding {
		enc = "binary"
	}
	return baseRequest{Client: id, Transport: transport, Protocol: proto.String(), Encoding: enc}
}

// putData places a client's payload: raw JSON in data, or base64 in
// b64data with binary encoding or when it is not JSON (a Protobuf
// client's bytes), in which case the request's encoding says "binary".
// A gRPC request's data is bytes, so there only binary encoding uses
// b64data.
func (e *endpoint) putData(b *baseRequest, data []byte) (json.RawMessage, string) {
	if len(data) == 0 {
		return nil, ""
	}
	if e.grpc != nil && !e.BinaryEncoding {
		if !json.Valid(data) {
			b.Encoding = "binary"
		}
		return json.RawMessage(data), ""
	}
	if e.BinaryEncoding || !json.Valid(data) {
		b.Encoding = "binary"
		return nil, base64.StdEncoding.EncodeToString(data)
	}
	return json.RawMessage(data), ""
}

// meta is the connection's meta when the endpoint includes it.
func (e *endpoint) meta(c *hub.Client) json.RawMessage {
	if !e.IncludeConnectionMeta {
		return nil
	}
	if m := c.Meta(); len(m) > 0 {
		return json.RawMessage(m)
	}
	return nil
}

// payload reads a payload from a result: b64 when set, else raw JSON.
// A JSON client can only carry JSON, so a binary payload for one is a
// failure of the backend.
func payload(raw json.RawMessage, b64 string, proto protocol.Type, field string) ([]byte, error) {
	if b64 != "" {
		out, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("b64%s is not base64: %w", field, err)
		}
		if proto == protocol.TypeJSON && !json.Valid(out) {
			return nil, fmt.Errorf("b64%s is not JSON, which a JSON client cannot receive", field)
		}
		return out, nil
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	// Over HTTP raw came out of a JSON document; a gRPC backend's bytes
	// may be anything.
	if proto == protocol.TypeJSON && !json.Valid(raw) {
		return nil, fmt.Errorf("%s is not JSON, which a JSON client cannot receive", field)
	}
	return []byte(raw), nil
}
