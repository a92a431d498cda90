package httpstream

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/guard"
)

// Server serves the HTTP transports of one hub. Its handlers are safe for
// concurrent use.
type Server struct {
	hub *hub.Hub
	cfg Config
}

// NewServer returns the transports of h, tuned by cfg.
func NewServer(h *hub.Hub, cfg Config) *Server {
	return &Server{hub: h, cfg: cfg.withDefaults()}
}

// ContentTypeProtobuf selects Protobuf on the HTTP-streaming and emulation
// endpoints (centrifuge-js sends it with its Protobuf codec); any other
// Content-Type means JSON.
const ContentTypeProtobuf = "application/octet-stream"

// streamSpec describes one kind of stream.
type streamSpec struct {
	transport string // hub.Transport* name
	framing   framing
	uni       bool
}

// requestProtocol is the encoding a request's Content-Type selects.
func requestProtocol(r *http.Request) protocol.Type {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == ContentTypeProtobuf {
		return protocol.TypeProtobuf
	}
	return protocol.TypeJSON
}

// readBody reads a request body of at most limit bytes. On failure it has
// answered the request (413 or 400) and returns false.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, what string) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, fmt.Sprintf("%s: body larger than %d bytes", what, limit), http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, fmt.Sprintf("%s: reading the body: %v", what, err), http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

// serve runs one stream: it answers 200 with the stream's headers, opens
// the hub connection, hands it the client's first commands (or, on a
// unidirectional stream, its connect request) and waits until the stream
// ends on either side.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, spec streamSpec, proto protocol.Type, first []byte, connect *protocol.ConnectRequest) {
	h := w.Header()
	switch {
	case spec.framing == framingSSE:
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
	case proto == protocol.TypeProtobuf:
		h.Set("Content-Type", ContentTypeProtobuf)
	default:
		h.Set("Content-Type", "application/json")
	}
	h.Set("Cache-Control", "private, no-cache, no-store, must-revalidate, max-age=0")
	h.Set("Pragma", "no-cache")
	h.Set("Expires", "0")
	// Proxies that buffer responses (nginx) would hold the messages back.
	h.Set("X-Accel-Buffering", "no")
	// A stream's connection is not reused: the last write deadline stays
	// set on it, and the final chunk of a stream cut for not reading must
	// not wait for ever.
	h.Set("Connection", "close")

	st := newStream(w, proto, spec.framing, spec.uni, s.cfg, r.RemoteAddr)
	rc := st.rc
	// net/http cancels the request's context when a read on the
	// connection fails, timeouts included: the read deadline that bounded
	// the body must not end the stream later.
	if err := rc.SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.cfg.Logger.Debug("httpstream: clear the read deadline", "remote", r.RemoteAddr, "error", err)
	}
	if spec.uni && s.cfg.ConnectCodeToHTTPResponse.Enabled {
		// The status waits for the connect's outcome (coderesponse.go).
		codes := s.cfg.ConnectCodeToHTTPResponse
		st.codes = &codes
	} else {
		st.wmu.Lock()
		w.WriteHeader(http.StatusOK)
		// The headers go out at once: the client counts the transport
		// open when they arrive.
		err := st.writeLocked(nil)
		st.wmu.Unlock()
		if err != nil {
			s.cfg.Logger.Debug("httpstream: response headers not sent", "remote", r.RemoteAddr, "error", err)
			return
		}
	}

	// A guard.Admission in front of this handler counts the stream against
	// its address until it authenticates.
	c := guard.Open(r, func(ticket guard.Ticket) *hub.Client {
		return s.hub.Open(st, hub.ConnInfo{
			RemoteAddr:     r.RemoteAddr,
			Transport:      spec.transport,
			Unidirectional: spec.uni,
			Session:        s.sessionFor(spec),
			Header:         r.Header,
			Admission:      ticket,
		})
	})
	s.cfg.Opened(r)
	if spec.uni {
		c.Connect(connect)
	} else {
		c.HandleFrame(first)
	}
	st.run(r.Context())
	st.end()
	c.HandleClose()
}

// sessionFor returns a new emulation session id for a bidirectional
// stream, made by the hub so that any node can verify it: its later
// commands arrive through the emulation endpoint.
func (s *Server) sessionFor(spec streamSpec) string {
	if spec.uni {
		return ""
	}
	return s.hub.NewSession()
}
