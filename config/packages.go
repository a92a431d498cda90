package config

import (
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/transport/guard"
	"github.com/heraldhq/herald/transport/websocket"
)

// The http_api and websocket sections are checked by the packages that
// own their values (api.Config, websocket.Config and guard.Config's
// Validate), once; their errors name Go fields, which hubProblems turns
// into keys. The conversions below are the only place that maps the
// sections' fields to those packages' fields, so what is checked is what
// the server runs.

// API is the http_api section as package api takes it, without a Logger:
// the section's options are api.Config's own.
func (c HTTPAPIConfig) API() api.Config { return c.Config }

// Transport is the websocket section as the WebSocket transport takes it;
// the server sets CheckOrigin, OriginHint and Logger.
func (c WebSocketConfig) Transport() websocket.Config { return c.WebSocketTransport }

// Admission is the websocket section's admission options as
// transport/guard takes them, with the keys named in its warnings; the
// server sets Pending and Logger.
func (c WebSocketConfig) Admission() guard.Config {
	a := c.ConnectionAdmission
	a.Names = guard.Names{
		MaxUnauthenticated:           "websocket.max_unauthenticated",
		MaxUnauthenticatedPerAddress: "websocket.max_unauthenticated_per_address",
		Rate:                         "websocket.ip_rate_limit",
	}
	return a
}
