package httpstream

import (
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// TestSlowReadAttack: on every HTTP transport, a client that opens its
// stream and never reads it is cut once a write waits past the write
// timeout; meanwhile the node stays healthy: a reading client on the same
// channel gets every publication, and the server's memory stays bounded
// (what the slow client costs is its socket buffers and one write, not a
// queue growing with what it misses).
func TestSlowReadAttack(t *testing.T) {
	connect := string(commands(t, protocol.TypeJSON, &protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{}}))
	for _, tt := range []struct {
		name, method, target string
		body                 string
	}{
		{"http_stream", "POST", pathHTTPStream, connect},
		{"sse", "GET", pathSSE + "?cf_connect=" + urlEscape(connect), ""},
		{"uni_http_stream", "POST", pathUniHTTPStream, `{}`},
		{"uni_sse", "GET", pathUniSSE + "?cf_connect=" + urlEscape(`{}`), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := uniEnv(t)
			e.srv.cfg.WriteTimeout = 200 * time.Millisecond
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			slow := e.rawRequest(t, tt.method, tt.target, body)
			if tc, ok := slow.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(4096)
			}
			reader := e.open(http.MethodPost, pathUniHTTPStream, "application/json", []byte(`{}`))
			if p := reader.push(); p.Connect == nil {
				t.Fatalf("reading client: first push %+v, want connect", p)
			}
			await(t, "both clients to subscribe", func() bool { return e.hub.NumSubscriptions() == 2 })

			var got atomic.Int64
			readerDone := make(chan struct{})
			go func() {
				defer close(readerDone)
				for {
					msg, err := reader.read()
					if err != nil {
						return
					}
					if strings.Contains(string(msg), `"pub"`) {
						got.Add(1)
					}
				}
			}()
			t.Cleanup(func() { reader.close(); <-readerDone })
			before := memInUse()
			payload := `"` + strings.Repeat("x", 32<<10) + `"`
			deadline := time.Now().Add(15 * time.Second)
			published, peak := 0, uint64(0)
			for e.hub.NumClients() > 1 {
				if time.Now().After(deadline) {
					t.Fatalf("the client that never reads is still connected after %d publications of %d bytes", published, len(payload))
				}
				publish(t, e, "news", payload)
				published++
				if published%50 == 0 {
					peak = max(peak, memInUse())
				}
				time.Sleep(time.Millisecond)
			}
			peak = max(peak, memInUse())
			// The reading client got everything, before and after the cut.
			const extra = 5
			for range extra {
				publish(t, e, "news", `"after"`)
			}
			await(t, "the reading client to get every publication", func() bool {
				return got.Load() == int64(published+extra)
			})
			if e.hub.NumClients() != 1 {
				t.Fatalf("%d clients, want the reading one only", e.hub.NumClients())
			}
			growth := int64(peak) - int64(before)
			t.Logf("%s: slow client cut after %d publications (%d KiB); peak heap growth %d KiB", tt.name, published, published*len(payload)>>10, growth>>10)
			if growth > 16<<20 {
				t.Fatalf("heap grew by %d MiB while a client did not read, want at most 16 MiB", growth>>20)
			}
		})
	}
}
