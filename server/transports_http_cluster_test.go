package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestHTTPStreamEmulationAcrossNodes: a browser's stream is held by node
// A while a load balancer sends its emulation requests to node B; B
// forwards them through the engine, and the replies and publications
// arrive on A's stream. On PostgreSQL and on Redis.
func TestHTTPStreamEmulationAcrossNodes(t *testing.T) {
	channels := hub.NamespaceOptions{AllowSubscribeForClient: true, AllowPublishForSubscriber: true}
	engines := map[string]func(t *testing.T) (a, b *Server){
		"postgres": func(t *testing.T) (*Server, *Server) {
			c := startPGCluster(t, 2, func(cfg *config.Config) { cfg.Channel.WithoutNamespace.NamespaceOptions = channels })
			return c.nodes[0], c.nodes[1]
		},
		"redis": func(t *testing.T) (*Server, *Server) {
			cfg := config.Default()
			cfg.HTTPAPI.Key = "k"
			cfg.Channel.WithoutNamespace.NamespaceOptions = channels
			cfg.Shutdown.DrainWindow = time.Duration(50 * time.Millisecond)
			cfg.Engine.Type = "redis"
			cfg.Engine.Redis.Address = config.StringList{testenv.Require(t, "HERALD_TEST_REDIS_ADDR")}
			cfg.Engine.Redis.Prefix = "herald-httpstream-test-" + time.Now().Format("150405.000000")
			var nodes []*Server
			for _, name := range []string{"node1", "node2"} {
				cfg.Name = name
				s := startServer(t, cfg)
				t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					if err := s.Shutdown(ctx); err != nil {
						t.Errorf("shut down %s: %v", name, err)
					}
				})
				nodes = append(nodes, s)
			}
			return nodes[0], nodes[1]
		},
	}
	for name, start := range engines {
		t.Run(name, func(t *testing.T) {
			a, b := start(t)
			testenv.Eventually(t, "both nodes to know each other", 10*time.Second, func() bool {
				return len(a.Hub().Nodes()) == 2 && len(b.Hub().Nodes()) == 2
			})
			for _, path := range []string{HTTPStreamPath, SSEPath} {
				t.Run(strings.TrimPrefix(path, "/connection/"), func(t *testing.T) {
					c := mustOpenStream(t, a, path, "alice")
					if c.node != a.Hub().NodeID() {
						t.Fatalf("connect result names node %q, want A's %q", c.node, a.Hub().NodeID())
					}
					ch := "room-" + name + "-" + strings.TrimPrefix(path, "/connection/")
					c.emulate(b, `{"id":2,"subscribe":{"channel":"`+ch+`"}}`)
					c.awaitMessage(`{"id":2,"subscribe":{`)
					c.emulate(b, `{"id":3,"publish":{"channel":"`+ch+`","data":{"via":"B"}}}`)
					c.awaitMessage(`"pub":{"data":{"via":"B"}`)
					// A publication through B's API reaches the stream on A.
					if body := apiCall(t, b, "publish", `{"channel":"`+ch+`","data":{"via":"api"}}`); !strings.Contains(body, `"result"`) {
						t.Fatalf("publish: %s", body)
					}
					c.awaitMessage(`"pub":{"data":{"via":"api"}`)
					// Once the stream is gone A answers 404 for the session.
					// (B would answer 204: it only knows that A is alive,
					// and forwarding does not wait for A.)
					session, node := c.session, c.node
					c.close()
					testenv.Eventually(t, "A to forget the client", 10*time.Second, func() bool { return a.Hub().NumClients() == 0 })
					if code := postEmulation(t, a, session, node); code != http.StatusNotFound {
						t.Fatalf("emulation for the closed session on its node: %d, want 404", code)
					}
					if code := postEmulation(t, b, session, "no-such-node"); code != http.StatusNotFound {
						t.Fatalf("emulation for an unknown node: %d, want 404", code)
					}
				})
			}
		})
	}
}

func postEmulation(t *testing.T, s *Server, session, node string) int {
	t.Helper()
	body := `{"session":"` + session + `","node":"` + node + `","data":"{\"id\":9,\"ping\":{}}"}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+s.Addr()+EmulationPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
