package httpstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// emulationJSON is the JSON body centrifuge-js POSTs: data is a string
// holding the commands, one JSON command per line.
type emulationJSON struct {
	Session string          `json:"session"`
	Node    string          `json:"node"`
	Data    json.RawMessage `json:"data"`
}

// Emulation serves /emulation: a POST carrying later commands for an
// HTTP-streaming or SSE session, {"session":…,"node":…,"data":"<commands>"}
// in JSON or a protocol.EmulationRequest with Content-Type
// application/octet-stream. It answers 204 once the commands are handed to
// the session (on this node, or sent to the node that holds it), 404 for a
// session or node that does not exist (a session its node did not make is
// refused here, without reaching another node), 400 for a malformed body,
// 413 for one over Config.Emulation.MaxRequestBodySize or, bound for another node,
// over hub.MaxForwardedEmulation, 429 over the hub's emulation rate
// limits (hub.EmulationLimits). The replies arrive on the session's
// stream.
func (s *Server) Emulation() http.Handler {
	return s.cors("POST, OPTIONS", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST, OPTIONS")
			http.Error(w, "emulation: want POST", http.StatusMethodNotAllowed)
			return
		}
		body, ok := readBody(w, r, s.cfg.Emulation.MaxRequestBodySize, "emulation")
		if !ok {
			return
		}
		req, err := parseEmulation(requestProtocol(r), body)
		if err != nil {
			http.Error(w, "emulation: "+err.Error(), http.StatusBadRequest)
			return
		}
		req.Addr = s.cfg.ClientAddr(r)
		err = s.hub.HandleEmulation(r.Context(), req)
		switch {
		case err == nil:
			w.WriteHeader(http.StatusNoContent)
		case errors.Is(err, hub.ErrUnknownSession), errors.Is(err, hub.ErrUnknownNode):
			http.Error(w, "emulation: "+err.Error(), http.StatusNotFound)
		case errors.Is(err, hub.ErrEmulationRateLimited):
			w.Header().Set("Retry-After", "1")
			http.Error(w, "emulation: "+err.Error(), http.StatusTooManyRequests)
		case errors.Is(err, hub.ErrEmulationTooLarge):
			http.Error(w, "emulation: "+err.Error(), http.StatusRequestEntityTooLarge)
		default:
			s.cfg.Logger.Warn("emulation request not delivered", "node", req.Node, "remote", r.RemoteAddr, "error", err)
			http.Error(w, "emulation: not delivered: "+err.Error(), http.StatusServiceUnavailable)
		}
	})
}

// parseEmulation decodes an emulation body in encoding t.
func parseEmulation(t protocol.Type, body []byte) (hub.EmulationRequest, error) {
	var req hub.EmulationRequest
	if len(body) == 0 {
		return req, errors.New("empty body: want {\"session\":…,\"node\":…,\"data\":…}")
	}
	if t == protocol.TypeProtobuf {
		var pb protocol.EmulationRequest
		if err := pb.UnmarshalVT(body); err != nil {
			return req, fmt.Errorf("not a Protobuf EmulationRequest: %w", err)
		}
		req = hub.EmulationRequest{Node: pb.Node, Session: pb.Session, Data: pb.Data}
	} else {
		var v emulationJSON
		if err := json.Unmarshal(body, &v); err != nil {
			return req, fmt.Errorf("not a JSON object {\"session\":…,\"node\":…,\"data\":…}: %w", err)
		}
		if len(v.Data) == 0 || v.Data[0] != '"' {
			return req, errors.New("data: want a JSON string holding the commands, one per line")
		}
		var data string
		if err := json.Unmarshal(v.Data, &data); err != nil {
			return req, fmt.Errorf("data: %w", err)
		}
		req = hub.EmulationRequest{Node: v.Node, Session: v.Session, Data: []byte(data)}
	}
	if req.Session == "" {
		return req, errors.New("session: missing: send the session of the connect result")
	}
	if len(req.Data) == 0 {
		return req, errors.New("data: no commands")
	}
	return req, nil
}
