package proxy_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/proxy"
)

// TestBackendErrorSizeBounded: a backend's error message and disconnect
// reason reach the client cut to proxy.MaxErrorMessage and
// proxy.MaxDisconnectReason bytes (still valid UTF-8), so a 1 MB message
// cannot make a reply big enough to close the client (3008 when its queue
// overflows); the client stays connected after the error.
func TestBackendErrorSizeBounded(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, nil))
	huge := strings.Repeat("é", 512<<10) // 1 MiB of two-byte runes

	c := n.dial(nil)
	c.connectOK(b, `{"user":"u"}`)
	b.answer("/rpc", `{"error":{"code":1000,"message":"`+huge+`"}}`)
	m := c.Call(`{"id":2,"rpc":{"method":"m"}}`)
	b.next()
	jsonclient.WantError(t, m, 1000)
	msg, _ := m["error"].(map[string]any)["message"].(string)
	if len(msg) > proxy.MaxErrorMessage || !utf8.ValidString(msg) || !strings.HasPrefix(huge, strings.TrimSuffix(msg, "…")) || len(msg) < proxy.MaxErrorMessage/2 {
		t.Fatalf("error message of %d bytes (valid UTF-8: %v), want the backend's cut to at most %d", len(msg), utf8.ValidString(msg), proxy.MaxErrorMessage)
	}
	if c.c.User() != "u" {
		t.Fatal("the error closed the connection")
	}
	// A short message is passed as it is.
	b.answer("/rpc", `{"error":{"code":1000,"message":"short"}}`)
	m = c.Call(`{"id":3,"rpc":{"method":"m"}}`)
	b.next()
	if got := m["error"].(map[string]any)["message"]; got != "short" {
		t.Fatalf("short message: %v", got)
	}

	// A disconnect's reason is cut to what a close frame can carry.
	d := n.dial(nil)
	b.answer("/connect", `{"disconnect":{"code":4000,"reason":"`+huge+`"}}`)
	d.Send(`{"id":1,"connect":{}}`)
	b.next()
	d.ExpectClose(4000, "")
	if _, reason := d.conn.CloseCode(); len(reason) > proxy.MaxDisconnectReason || !utf8.ValidString(reason) || len(reason) == 0 {
		t.Fatalf("disconnect reason of %d bytes, want at most %d (valid UTF-8: %v)", len(reason), proxy.MaxDisconnectReason, utf8.ValidString(reason))
	}
}
