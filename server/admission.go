package server

import (
	"fmt"
	"log/slog"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/transport/guard"
)

// newAdmission builds the node's admission control from the websocket
// section: every endpoint that opens connections (both WebSocket
// endpoints and the HTTP streams) passes the same one.
func newAdmission(ws config.WebSocketConfig, pending func() int, log *slog.Logger) (*guard.Admission, error) {
	trusted, err := guard.ParseTrustedProxies(ws.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("websocket.trusted_proxies: %w", err)
	}
	cfg := ws.Admission()
	cfg.TrustedProxies, cfg.Pending, cfg.Logger = trusted, pending, log
	a, err := guard.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("websocket admission: %w", err)
	}
	return a, nil
}
