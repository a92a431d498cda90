package websocket

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gobwas/httphead"
)

// The upgrader (gobwas/ws) reads a handshake more strictly than clients
// write it: it fails with 400 "malformed HTTP request" on an empty
// Sec-WebSocket-Protocol (what centrifuge-python's WebSocket library sends
// in its default JSON mode), on a protocol list that is not a list of
// tokens, and on an empty Sec-WebSocket-Extensions; and it reads only the
// first line of Connection, Upgrade and Sec-WebSocket-Version, where a
// client or a proxy may send the header twice. Centrifugo (gorilla's
// reading) accepts all of these. handshakeRequest gives the upgrader the
// request as the client meant it: the headers reduced to the one value
// the upgrader looks for.

// Handshake headers in net/http's canonical form, as the upgrader reads
// them.
const (
	hdrConnection = "Connection"
	hdrUpgrade    = "Upgrade"
	hdrVersion    = "Sec-Websocket-Version"
	hdrProtocol   = "Sec-Websocket-Protocol"
	hdrExtensions = "Sec-Websocket-Extensions"
)

// handshakeRequest is r, or, when its handshake headers need reducing, a
// shallow copy of r with a reduced copy of its headers (r itself is left
// as it came, for the application's accept function).
func handshakeRequest(r *http.Request, uni bool) *http.Request {
	reduced := [...]struct {
		key  string
		want []string
	}{
		{hdrConnection, oneToken(r.Header[hdrConnection], "upgrade", "Upgrade", true)},
		{hdrUpgrade, oneToken(r.Header[hdrUpgrade], "websocket", "websocket", false)},
		{hdrVersion, oneToken(r.Header[hdrVersion], "13", "13", false)},
		{hdrExtensions, nonBlank(r.Header[hdrExtensions])},
		{hdrProtocol, nil},
	}
	if uni {
		// A unidirectional connection negotiates no subprotocol: the
		// upgrader does not read the header there.
		reduced[len(reduced)-1].key = ""
	} else {
		reduced[len(reduced)-1].want = ourSubprotocol(r.Header[hdrProtocol])
	}
	var h http.Header
	for _, x := range reduced {
		if x.key == "" || slices.Equal(r.Header[x.key], x.want) {
			continue
		}
		if h == nil {
			h = r.Header.Clone()
		}
		if x.want == nil {
			delete(h, x.key)
		} else {
			h[x.key] = x.want
		}
	}
	if h == nil {
		return r
	}
	r2 := *r
	r2.Header = h
	return &r2
}

// listItems calls f with each comma-separated item of the header's lines,
// trimmed of spaces and tabs, until f returns false.
func listItems(lines []string, f func(item string) bool) {
	for _, line := range lines {
		for item := range strings.SplitSeq(line, ",") {
			if !f(strings.Trim(item, " \t")) {
				return
			}
		}
	}
}

// oneToken is the header's lines as the upgrader reads them: it looks at
// the first line only, for token as the whole line (case insensitively)
// or, where list, as one of its items. When the first line will not do but
// an item of any line is token, it is []string{as}; otherwise the lines
// unchanged (the upgrader answers them as they deserve).
func oneToken(lines []string, token, as string, list bool) []string {
	if len(lines) > 0 && (strings.EqualFold(lines[0], token) || list && hasItem(lines[:1], token)) {
		return lines
	}
	if !hasItem(lines, token) {
		return lines
	}
	return []string{as}
}

// hasItem reports whether an item of the lines is token, case
// insensitively.
func hasItem(lines []string, token string) bool {
	found := false
	listItems(lines, func(item string) bool {
		found = strings.EqualFold(item, token)
		return !found
	})
	return found
}

// ourSubprotocol is the first subprotocol the client offers that Herald
// speaks, alone, or nil when it offers none (an empty or blank header, as
// centrifuge-python sends, included): no subprotocol is JSON.
// Subprotocol names are case sensitive (RFC 6455, section 4.1).
func ourSubprotocol(lines []string) []string {
	var ours []string
	listItems(lines, func(item string) bool {
		if item == SubprotocolJSON || item == SubprotocolProtobuf {
			ours = []string{item}
		}
		return ours == nil
	})
	return ours
}

// nonBlank is the header's lines that offer an extension the upgrader can
// read, or nil: blank lines are no offer, and a line it cannot parse is
// dropped rather than failing the handshake (RFC 6455 lets the server
// accept none of the offered extensions).
func nonBlank(lines []string) []string {
	var kept []string
	for _, line := range lines {
		if strings.Trim(line, " \t,") == "" {
			continue
		}
		if _, ok := httphead.ParseOptions([]byte(line), nil); !ok {
			continue
		}
		kept = append(kept, line)
	}
	if len(kept) == len(lines) {
		return lines
	}
	return kept
}
