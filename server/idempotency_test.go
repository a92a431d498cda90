package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestIdempotentPublishAcrossNodes retries every publication through both
// nodes, one after the other and at the same time, and counts what a
// subscriber receives: each publication once, in order, and every retry
// answered with the first result.
func TestIdempotentPublishAcrossNodes(t *testing.T) {
	for _, name := range []string{"postgres", "redis"} {
		setup := networkedEngines()[name]
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.HTTPAPI.Key = "k"
			cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{
				AllowSubscribeForClient: true, HistorySize: 100, HistoryTTL: time.Duration(time.Minute), ForceRecovery: true,
			}
			setup(t, &cfg)
			cfg.Name = "node1"
			n1 := startServer(t, cfg)
			cfg.Name = "node2"
			n2 := startServer(t, cfg)
			t.Cleanup(func() {
				_ = n1.Shutdown(context.Background())
				_ = n2.Shutdown(context.Background())
			})
			testenv.Eventually(t, "both nodes", 10*time.Second, func() bool { return len(n1.Hub().Nodes()) == 2 })
			c := connectClient(t, n2, "alice")
			c.MustSubscribe(2, "orders", "")

			const total = 30
			for i := range total {
				body := fmt.Sprintf(`{"channel":"orders","data":{"n":%d},"idempotency_key":"order-%d"}`, i, i)
				answers := make([]string, 4)
				var wg sync.WaitGroup
				answers[0] = apiCall(t, n1, "publish", body)
				for j, n := range []*Server{n2, n1, n2} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						answers[j+1] = apiCallNoFatal(n, "publish", body)
					}()
				}
				wg.Wait()
				want := fmt.Sprintf(`"offset":%d`, i+1)
				for j, a := range answers {
					if a != answers[0] || !strings.Contains(a, want) {
						t.Fatalf("publication %d, try %d: %s (first: %s)", i, j, a, answers[0])
					}
				}
			}
			// A marker without a key ends the stream: everything before it
			// is what the subscriber got.
			apiCall(t, n1, "publish", `{"channel":"orders","data":"end"}`)
			// Publications may share a frame, one JSON message per line:
			// Next returns them one by one.
			for i := 0; ; i++ {
				m := c.Next()
				data := jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data"))
				offset := jsonclient.Num(jsonclient.Path(m, "push", "pub", "offset"))
				if data == `"end"` {
					if i != total {
						t.Fatalf("%d publications delivered, want %d", i, total)
					}
					break
				}
				if want := fmt.Sprintf(`{"n":%d}`, i); data != want || offset != int64(i+1) {
					t.Fatalf("delivery %d: %s at offset %d, want %s at %d", i, data, offset, want, i+1)
				}
			}
		})
	}
}

// TestIdempotencyKeyOnNATS: an engine that cannot remember keys refuses
// them instead of delivering twice.
func TestIdempotencyKeyOnNATS(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
	networkedEngines()["nats"](t, &cfg)
	n := startServer(t, cfg)
	t.Cleanup(func() { _ = n.Shutdown(context.Background()) })
	got := apiCall(t, n, "publish", `{"channel":"x","data":1,"idempotency_key":"k"}`)
	if !strings.Contains(got, `"code":108`) || !strings.Contains(got, "idempotency_key") {
		t.Fatalf("publish with a key on NATS: %s", got)
	}
}

// apiCallNoFatal is apiCall for other goroutines: errors come back as the
// answer's text.
func apiCallNoFatal(s *Server, method, body string) string {
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+"/api/"+method, strings.NewReader(body))
	req.Header.Set("X-API-Key", "k")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return string(b)
}
