package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// handler serves the API methods of one hub.
type handler struct {
	hub     *hub.Hub
	cfg     Config
	key     []byte
	log     *slog.Logger
	tracer  trace.Tracer // nil: tracing off
	methods *methodSet
	// exchanges recycles the per-request buffers: a backend that
	// publishes in a loop should not make a new body and response buffer
	// for every request.
	exchanges sync.Pool
}

// exchange holds one request's reusable buffers. Nothing decoded from
// body aliases it (encoding/json copies strings and RawMessages), so the
// buffer can serve the next request while the engine keeps the data.
type exchange struct {
	body []byte
	out  bytes.Buffer
	enc  *json.Encoder
}

// Buffers that grew past this are dropped instead of pooled, so that one
// large request does not pin memory for good.
const maxPooledBuffer = 64 << 10

// NewHandler returns the API handler for h. It expects paths of the form
// "/{method}": mount it with http.StripPrefix("/api", handler) under
// "/api/". See the package documentation for the protocol.
func NewHandler(h *hub.Hub, cfg Config) (http.Handler, error) {
	if h == nil {
		return nil, errors.New("api: hub is required")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &handler{hub: h, cfg: cfg, key: []byte(cfg.Key), log: cfg.Logger}
	if cfg.TracerProvider != nil {
		a.tracer = cfg.TracerProvider.Tracer(tracerName)
	}
	a.exchanges.New = func() any {
		x := &exchange{}
		x.enc = json.NewEncoder(&x.out)
		// Payloads are embedded as they were published; escaping <, >
		// and & would only make them longer.
		x.enc.SetEscapeHTML(false)
		return x
	}
	a.methods = newMethodSet()
	return a, nil
}

// call decodes body into m's request type with encoding/json and runs m.
// notJSON reports a body that is not JSON at all (plain 400).
func (a *handler) call(ctx context.Context, m *method, body []byte) (result any, e *Error, notJSON bool) {
	req := m.newReq()
	if e, notJSON := decode(body, req); e != nil || notJSON {
		return nil, e, notJSON
	}
	res, e := m.run(a, ctx, req)
	if e != nil {
		return nil, e, false
	}
	return res, nil, false
}

// decode reads body into v; an empty body is {}.
func decode(body []byte, v any) (e *Error, notJSON bool) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, false
	}
	if err := json.Unmarshal(body, v); err != nil {
		if e := decodeError(err); e != nil {
			return e, false
		}
		return nil, true
	}
	return nil, false
}

// ServeHTTP implements http.Handler.
func (a *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every request has an id, the caller's X-Request-Id or a new one; it
	// is echoed back and named in every log line about the request.
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 128 {
		id = newRequestID()
	}
	w.Header().Set("X-Request-Id", id)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	// The body must arrive within BodyReadTimeout, set before anything
	// else: a request refused without reading its body still has it read
	// (and discarded) by net/http, which must not wait for ever either.
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(a.cfg.BodyReadTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		a.logger(r.Context()).Warn("api: set the body read deadline", "error", err)
	}
	if !a.authorized(r) {
		log := a.logger(r.Context())
		if !a.cfg.AllowKeyInQuery && r.URL.Query().Has("api_key") {
			log = log.With("hint", "the api_key query parameter is off: send the key in the X-API-Key header")
		}
		log.Debug("api: unauthorized request", "path", r.URL.Path, "remote", r.RemoteAddr)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: the API takes POST", http.StatusMethodNotAllowed)
		return
	}
	x := a.exchanges.Get().(*exchange)
	defer a.release(x)
	name := strings.TrimPrefix(r.URL.Path, "/")
	m := a.methods.route(name)
	known := m != nil
	isBatch := name == "batch"
	// The prefix itself is the single endpoint (legacy.go).
	isLegacy := name == ""
	if !known && !isBatch && !isLegacy {
		a.writeError(w, r, x, newError(protocol.ErrorMethodNotFound, "method not found: %q", name), http.StatusNotFound)
		return
	}
	if r.ContentLength > a.cfg.MaxBodySize {
		a.tooLarge(w)
		return
	}
	body, err := readBody(r, x.body[:0], a.cfg.MaxBodySize)
	x.body = body
	switch {
	case errors.Is(err, errBodyTooLarge):
		a.tooLarge(w)
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		a.logger(r.Context()).Debug("api: request body too slow", "method", name, "remote", r.RemoteAddr, "timeout", a.cfg.BodyReadTimeout)
		// The connection's read side is past its deadline: it cannot
		// serve another request.
		w.Header().Set("Connection", "close")
		http.Error(w, "request body did not arrive within "+a.cfg.BodyReadTimeout.String(), http.StatusRequestTimeout)
		return
	case err != nil:
		a.logger(r.Context()).Warn("api: read request body", "method", name, "error", err)
		http.Error(w, "cannot read the request body", http.StatusInternalServerError)
		return
	}
	// The body is in: lift the deadline, or net/http's background read,
	// which watches for the caller going away, would hit it during a long
	// call and cancel the request's context.
	if err := rc.SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		a.logger(r.Context()).Warn("api: clear the body read deadline", "error", err)
	}

	if isLegacy {
		r, span := a.traceRequest(r, "legacy")
		a.serveLegacy(w, r.Context(), x, body)
		endSpan(span, nil)
		return
	}
	r, span := a.traceRequest(r, name)
	if isBatch {
		a.serveBatch(w, r, x, body)
		endSpan(span, nil)
		return
	}
	res, e, notJSON := a.call(r.Context(), m, body)
	if notJSON {
		endSpan(span, badRequest("request body is not JSON"))
	} else {
		endSpan(span, e)
	}
	switch {
	case notJSON:
		http.Error(w, "request body is not JSON", http.StatusBadRequest)
	case e != nil:
		a.writeError(w, r, x, e, 0)
	default:
		a.writeResult(w, r, x, m.name, res)
	}
}

func (a *handler) tooLarge(w http.ResponseWriter) {
	http.Error(w, "request body too large: the limit is "+strconv.FormatInt(a.cfg.MaxBodySize, 10)+" bytes", http.StatusRequestEntityTooLarge)
}

func (a *handler) release(x *exchange) {
	if cap(x.body) > maxPooledBuffer {
		x.body = nil
	}
	if x.out.Cap() > maxPooledBuffer {
		x.out = bytes.Buffer{}
	}
	x.out.Reset()
	a.exchanges.Put(x)
}

// transportMode reports whether errors are sent as HTTP statuses.
func (a *handler) transportMode(r *http.Request) bool {
	return a.cfg.ErrorMode == ErrorModeTransport || r.Header.Get("X-Centrifugo-Error-Mode") == ErrorModeTransport
}

// writeResult answers {"result":res}, or error 106 when res is larger
// than Config.MaxResponseSize.
func (a *handler) writeResult(w http.ResponseWriter, r *http.Request, x *exchange, method string, res any) {
	x.out.WriteString(`{"result":`)
	if !a.encode(w, x, res) {
		return
	}
	if int64(x.out.Len()) > a.cfg.MaxResponseSize {
		x.out.Reset()
		a.writeError(w, r, x, a.resultTooLarge(method), 0)
		return
	}
	x.out.WriteByte('}')
	writeJSON(w, http.StatusOK, x.out.Bytes())
}

// writeError answers e: {"error":e} with 200, or in transport error mode
// the bare e with its status. status, when not 0, is used in both modes.
func (a *handler) writeError(w http.ResponseWriter, r *http.Request, x *exchange, e *Error, status int) {
	transport := a.transportMode(r)
	if status == 0 {
		status = http.StatusOK
		if transport {
			status = HTTPStatus(e)
		}
	}
	if !transport {
		x.out.WriteString(`{"error":`)
	}
	if !a.encode(w, x, e) {
		return
	}
	if !transport {
		x.out.WriteByte('}')
	}
	writeJSON(w, status, x.out.Bytes())
}

// encode appends v to x.out without the encoder's trailing newline. On
// failure it answers 500 and returns false.
func (a *handler) encode(w http.ResponseWriter, x *exchange, v any) bool {
	if err := x.enc.Encode(v); err != nil {
		a.log.Error("api: encode response", "error", err)
		http.Error(w, "cannot encode the response", http.StatusInternalServerError)
		return false
	}
	x.out.Truncate(x.out.Len() - 1)
	return true
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

type requestIDKey struct{}

// logger is the handler's logger with the request's id.
func (a *handler) logger(ctx context.Context) *slog.Logger {
	if id, ok := ctx.Value(requestIDKey{}).(string); ok {
		return a.log.With("request_id", id)
	}
	return a.log
}

// newRequestID returns a short random id.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
