package proxy

import "unicode/utf8"

// MaxErrorMessage bounds the message of a backend's error that reaches
// the client, in bytes. A backend's message goes into a reply queued for
// the client: a megabyte of it would overflow the client's queue and
// close it (3008) instead of answering. A longer one is cut, at a rune
// boundary, and ends with "…".
const MaxErrorMessage = 1024

// MaxDisconnectReason bounds a backend's disconnect reason, in bytes: the
// most a WebSocket close frame can carry.
const MaxDisconnectReason = 123

// cut returns s when it fits in limit bytes, else its longest prefix
// that leaves room for "…" without splitting a rune, then "…".
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const ellipsis = "…"
	n := limit - len(ellipsis)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ellipsis
}
