package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	wt "github.com/quic-go/webtransport-go"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/testtoken"
)

// http3Node is a TLS node with HTTP/3, WebTransport and the
// unidirectional HTTP transports on.
func http3Node(t *testing.T, ca *testcerts.CA) *Server {
	t.Helper()
	return tlsNode(t, ca.Server("server"), func(c *config.Config) {
		c.HTTP.HTTP3.Enabled = true
		c.WebTransport.Enabled = true
		c.UniHTTPStream.Enabled = true
		c.UniSSE.Enabled = true
	})
}

// h3Client speaks HTTP/3 only, trusting ca.
func h3Client(t *testing.T, ca *testcerts.CA) *http.Client {
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}
	t.Cleanup(func() { _ = tr.Close() })
	return &http.Client{Transport: tr}
}

// uniRequest opens a unidirectional stream at base+path with a connect
// request holding tok: the body of a POST to uni_http_stream, the
// cf_connect of a GET to uni_sse.
func uniRequest(ctx context.Context, base, path, tok string) *http.Request {
	connect := `{"token":"` + tok + `"}`
	if path == UniSSEPath {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"?cf_connect="+url.QueryEscape(connect), nil)
		return req
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(connect))
	return req
}

// TestHTTP3ServesUniTransportsAndAPI: with http.http3 the TCP listener
// advertises HTTP/3 (Alt-Svc), and a quic-go HTTP/3 client receives the
// unidirectional streams and calls the API over it. The streams set
// "Connection: close", which HTTP/3 forbids and quic-go's client refuses
// in a response: they work only because h3Writer leaves it out.
func TestHTTP3ServesUniTransportsAndAPI(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	s := http3Node(t, ca)
	resp, err := httpsClient(t, ca).Get("https://" + s.Addr() + config.HealthzPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, port, _ := net.SplitHostPort(s.Addr())
	if alt := resp.Header.Get("Alt-Svc"); !strings.Contains(alt, `h3=":`+port+`"`) {
		t.Fatalf("Alt-Svc %q over %s, want h3 on port %s", alt, resp.Proto, port)
	}
	h3 := h3Client(t, ca)
	tok := testtoken.Connect(t, "secret", auth.ConnectClaims{User: "bob", Channels: []string{"feed"}})
	for _, path := range []string{UniHTTPStreamPath, UniSSEPath} {
		t.Run(strings.TrimPrefix(path, "/connection/"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			resp, err := h3.Do(uniRequest(ctx, "https://"+s.Addr(), path, tok))
			if err != nil {
				t.Fatalf("open over HTTP/3: %v", err)
			}
			if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 3 {
				t.Fatalf("open: %s over %s, want 200 over HTTP/3", resp.Status, resp.Proto)
			}
			c := &httpStreamClient{t: t, resp: resp, rd: bufio.NewReader(resp.Body), sse: path == UniSSEPath, cancel: cancel}
			defer c.close()
			if msg := c.next(); !strings.HasPrefix(string(msg), `{"connect":`) || !strings.Contains(string(msg), `"feed"`) {
				t.Fatalf("first push %s, want the connect push with feed", msg)
			}
			if r, body := apiOver(t, h3, s, "publish", `{"channel":"feed","data":{"n":1}}`); r.StatusCode != http.StatusOK || r.ProtoMajor != 3 || strings.Contains(body, "error") {
				t.Fatalf("publish over HTTP/3: %s over %s: %s", r.Status, r.Proto, body)
			}
			if msg := c.next(); !strings.HasPrefix(string(msg), `{"channel":"feed","pub":{"data":{"n":1}`) {
				t.Fatalf("push %s, want the publication", msg)
			}
			apiOver(t, h3, s, "disconnect", `{"user":"bob"}`)
			if msg := c.next(); !strings.HasPrefix(string(msg), `{"disconnect":{"code":3503`) {
				t.Fatalf("push %s, want the disconnect push 3503", msg)
			}
		})
	}
}

// TestWebTransportThroughTheServer: webtransport.enabled serves the
// endpoint on the HTTP/3 side, behind the token check of every transport.
func TestWebTransportThroughTheServer(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	s := http3Node(t, ca)
	d := &wt.Dialer{
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool},
		QUICConfig:      &quic.Config{EnableDatagrams: true, EnableStreamResetPartialDelivery: true},
	}
	t.Cleanup(func() { _ = d.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	resp, sess, err := d.Dial(ctx, "https://"+s.Addr()+s.paths.WebTransport, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("dial: %v %v", resp, err)
	}
	defer sess.CloseWithError(0, "")
	str, err := sess.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = str.SetDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(str)
	await := func(want string) {
		t.Helper()
		for {
			line, err := rd.ReadBytes('\n')
			if err != nil {
				t.Fatalf("waiting for %s: %v", want, err)
			}
			if bytes.Contains(line, []byte(want)) {
				return
			}
		}
	}
	if _, err := str.Write([]byte(`{"id":1,"connect":{"token":"` + token(t, "alice") + `"}}` + "\n" + `{"id":2,"subscribe":{"channel":"room"}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	await(`"id":2,"subscribe"`)
	apiOver(t, httpsClient(t, ca), s, "publish", `{"channel":"room","data":{"via":"wt"}}`)
	await(`"pub":{"data":{"via":"wt"}`)
	apiOver(t, httpsClient(t, ca), s, "disconnect", `{"user":"alice"}`)
	await(`"disconnect":{"code":3503`)
}
