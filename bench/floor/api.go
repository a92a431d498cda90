package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// publishRequest is the server API's publish: only channel and data matter
// to the floor.
type publishRequest struct {
	Channel string          `json:"channel"`
	Data    json.RawMessage `json:"data"`
}

type batchRequest struct {
	Commands []struct {
		Publish *publishRequest `json:"publish"`
	} `json:"commands"`
}

// apiError is the server API's error shape, which herald-bench reads.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

const maxAPIBody = 16 << 20

func (s *Server) apiHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/publish", func(w http.ResponseWriter, r *http.Request) {
		var req publishRequest
		if !s.readAPI(w, r, &req) {
			return
		}
		if err := s.publish(r.Context(), &req); err != nil {
			writeAPI(w, map[string]any{"error": toAPIError(err)})
			return
		}
		writeAPI(w, map[string]any{"result": struct{}{}})
	})
	mux.HandleFunc("POST /api/batch", func(w http.ResponseWriter, r *http.Request) {
		var req batchRequest
		if !s.readAPI(w, r, &req) {
			return
		}
		replies := make([]map[string]any, len(req.Commands))
		for i, c := range req.Commands {
			switch {
			case c.Publish == nil:
				replies[i] = map[string]any{"error": apiError{Code: 104, Message: "method not found"}}
			default:
				if err := s.publish(r.Context(), c.Publish); err != nil {
					replies[i] = map[string]any{"error": toAPIError(err)}
				} else {
					replies[i] = map[string]any{"publish": struct{}{}}
				}
			}
		}
		writeAPI(w, map[string]any{"replies": replies})
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) { writeAPI(w, s.Stats()) })
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	return mux
}

// readAPI checks the key and decodes the body; false when it answered
// with an error already.
func (s *Server) readAPI(w http.ResponseWriter, r *http.Request, v any) bool {
	if s.cfg.APIKey != "" {
		key := r.Header.Get("X-API-Key")
		if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "apikey "); ok {
			key = a
		}
		if key != s.cfg.APIKey {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return false
		}
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxAPIBody)).Decode(v); err != nil {
		http.Error(w, fmt.Sprintf("bad request: %v", err), http.StatusBadRequest)
		return false
	}
	return true
}

var errBadPublish = errors.New("publish needs a channel and data")

// publish encodes the push once per format and hands it to the channel's
// writers (a channel nobody subscribed to drops it); with -redis, it hands
// the data to Redis instead, for the nodes subscribed to the channel.
func (s *Server) publish(ctx context.Context, req *publishRequest) error {
	if req.Channel == "" || len(req.Data) == 0 {
		return errBadPublish
	}
	s.stats.publications.Add(1)
	if s.relay != nil {
		return s.relay.publish(ctx, req.Channel, req.Data)
	}
	return s.deliver(req.Channel, req.Data)
}

// deliver gives a publication's data to the channel's local subscribers.
func (s *Server) deliver(channel string, data []byte) error {
	ch := s.channel(channel)
	if ch == nil {
		return nil
	}
	var frames [len(formats)][]byte
	for _, t := range formats {
		f, err := pushFrame(t, channel, data)
		if err != nil {
			return err
		}
		frames[t] = f
	}
	return ch.publish(&frames)
}

func toAPIError(err error) apiError {
	switch {
	case errors.Is(err, errBadPublish):
		return apiError{Code: 107, Message: err.Error()}
	case errors.Is(err, errBacklog):
		return apiError{Code: 111, Message: err.Error()}
	}
	return apiError{Code: 100, Message: err.Error()}
}

func writeAPI(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
