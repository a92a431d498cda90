package proxy_test

import (
	"net/http"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/proxy"
)

// TestStatusToCodeTransforms: an HTTP status the backend answers becomes
// the configured client error or disconnect; an unlisted one stays error
// 100.
func TestStatusToCodeTransforms(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, func(e *proxy.Endpoint) {
		e.StatusToCodeTransforms = []proxy.StatusTransform{
			{StatusCode: http.StatusForbidden, ToError: proxy.StatusToError{Code: 103, Message: "denied"}},
			{StatusCode: http.StatusUnauthorized, ToDisconnect: hub.DisconnectTransformTo{Code: 4501, Reason: "unauthorized"}},
		}
	}))
	status := func(code int) {
		b.handle("/connect", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) })
	}

	status(http.StatusForbidden)
	c := n.dial(nil)
	m := c.Call(`{"id":1,"connect":{}}`)
	b.next()
	if jsonclient.Compact(t, m["error"]) != `{"code":103,"message":"denied"}` {
		t.Errorf("403 with a transform to error 103: %v", m)
	}

	status(http.StatusUnauthorized)
	c2 := n.dial(nil)
	c2.Send(`{"id":1,"connect":{}}`)
	b.next()
	c2.ExpectClose(4501, "unauthorized")

	status(http.StatusTeapot)
	c3 := n.dial(nil)
	m = c3.Call(`{"id":1,"connect":{}}`)
	b.next()
	if jsonclient.Compact(t, m["error"]) != `{"code":100,"message":"internal server error","temporary":true}` {
		t.Errorf("an unlisted status: %v, want error 100", m)
	}
}
