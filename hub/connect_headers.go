package hub

import "strings"

// A client sends headers inside its connect command when its transport
// cannot set HTTP headers (a browser's WebSocket: protocol v2 header
// emulation, ConnectRequest.headers). Centrifugo v6.9.1 keeps them in the
// connection's context for its whole life when some proxy lists names in
// emulated_headers (internal/client/handler.go:561-567), so that every
// later proxy call (refresh, subscribe, publish, rpc, ...) can forward
// them; Config.KeepConnectHeaders is that list, and only the names on it
// are kept, so that a connection holds nothing a proxy never sends.

// keepConnectHeadersLocked records the headers of the connect command
// that Config.KeepConnectHeaders names; c.mu must be held.
func (c *Client) keepConnectHeadersLocked(headers map[string]string) {
	names := c.hub.cfg.KeepConnectHeaders
	if len(names) == 0 || len(headers) == 0 {
		return
	}
	var kept map[string]string
	for k, v := range headers {
		for _, n := range names {
			if strings.EqualFold(k, n) {
				if kept == nil {
					kept = make(map[string]string, len(names))
				}
				kept[k] = v
				break
			}
		}
	}
	if kept != nil {
		c.rareLocked().connectHeaders = kept
	}
}

// ConnectHeaders are the headers of the client's connect command that
// Config.KeepConnectHeaders names, by the names the client sent; nil when
// it sent none of them. The map must not be modified.
func (c *Client) ConnectHeaders() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rare == nil {
		return nil
	}
	return c.rare.connectHeaders
}
