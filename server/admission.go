package server

import (
	"fmt"
	"log/slog"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/transport/guard"
)

// newAdmission builds the node's admission control from the websocket
// section: every endpoint that opens connections (both WebSocket
// endpoints and the HTTP streams) passes the same one. guard.New parses
// the trusted proxies.
func newAdmission(ws config.WebSocketConfig, pending func() int, log *slog.Logger) (*guard.Admission, error) {
	cfg := ws.Admission()
	cfg.Pending, cfg.Logger = pending, log
	a, err := guard.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("websocket admission: %w", err)
	}
	return a, nil
}
