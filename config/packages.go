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

// Transport is the websocket section as the WebSocket transport takes it,
// without CheckOrigin, OriginHint and Logger, which the server sets.
func (c WebSocketConfig) Transport() websocket.Config {
	return websocket.Config{
		MaxMessageSize:     c.MessageSizeLimit,
		WriteTimeout:       c.WriteTimeout,
		ReadTimeout:        c.ReadTimeout,
		Poller:             websocket.Poller(c.Poller),
		Compression:        c.Compression,
		CompressionMinSize: c.CompressionMinSize,
		CompressionLevel:   c.CompressionLevel,
	}
}

// transportRenames maps websocket.Config's field names to the websocket
// section's where they differ, for hubProblems.
var transportRenames = []string{"MaxMessageSize", "MessageSizeLimit"}

// Admission is the websocket section's admission limits as
// transport/guard takes them, with the keys named in its warnings; the
// server adds TrustedProxies (guard.ParseTrustedProxies), Pending and
// Logger.
func (c WebSocketConfig) Admission() guard.Config {
	return guard.Config{
		MaxUnauthenticated:           c.MaxUnauthenticated,
		MaxUnauthenticatedPerAddress: c.MaxUnauthenticatedPerAddress,
		Rate:                         c.IPRateLimit,
		Burst:                        c.IPRateBurst,
		Names: guard.Names{
			MaxUnauthenticated:           "websocket.max_unauthenticated",
			MaxUnauthenticatedPerAddress: "websocket.max_unauthenticated_per_address",
			Rate:                         "websocket.ip_rate_limit",
		},
	}
}

// admissionRenames maps guard.Config's field names to the websocket
// section's, for hubProblems.
var admissionRenames = []string{"Rate", "IPRateLimit", "Burst", "IPRateBurst"}
