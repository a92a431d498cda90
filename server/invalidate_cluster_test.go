package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestInvalidateStateCluster: a publication through one node reaches a
// compacted subscriber of another by channel id; invalidate_state through
// one node reaches the subscribers and connections of the others; on the
// engines that span nodes.
func TestInvalidateStateCluster(t *testing.T) {
	for _, name := range []string{"postgres", "redis"} {
		setup := networkedEngines()[name]
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.HTTPAPI.Key = "k"
			cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true, AllowChannelCompaction: true}
			setup(t, &cfg)
			nodes := startNodes(t, cfg, "node1", "node2")
			n1, n2 := nodes[0], nodes[1]
			testenv.Eventually(t, "two nodes", 10*time.Second, func() bool { return len(n1.Hub().Nodes()) == 2 })

			alice, bob := connectClient(t, n2, "alice"), connectClient(t, n2, "bob")
			id := jsonclient.Num(alice.MustSubscribe(2, "room", `"flag":1`)["id"])
			bob.MustSubscribe(2, "room", "")
			apiCall(t, n1, "publish", `{"channel":"room","data":{"n":1}}`)
			if got, want := alice.Read(), fmt.Sprintf(`{"push":{"id":%d,"pub":{"data":{"n":1}}}}`, id); got != want {
				t.Fatalf("compacted subscriber: %s, want %s", got, want)
			}
			if got, want := bob.Read(), `{"push":{"channel":"room","pub":{"data":{"n":1}}}}`; got != want {
				t.Fatalf("subscriber by name: %s, want %s", got, want)
			}
			if got := apiCall(t, n1, "invalidate_state", `{"channel":"room"}`); got != `{"result":{}}` {
				t.Fatalf("invalidate_state: %s", got)
			}
			const push = `{"push":{"channel":"room","unsubscribe":{"code":2502,"reason":"state invalidated"}}}`
			for _, c := range []*jsonclient.Client{alice, bob} {
				if got := c.Read(); got != push {
					t.Fatalf("%s, want %s", got, push)
				}
			}
			if got := apiCall(t, n1, "invalidate_state", `{"user":"alice"}`); got != `{"result":{}}` {
				t.Fatalf("invalidate_state: %s", got)
			}
			alice.ExpectClose(3014, "state invalidated")
		})
	}
}

// startNodes starts a node of cfg under each name, and shuts them down
// when the test ends.
func startNodes(t *testing.T, cfg config.Config, names ...string) []*Server {
	t.Helper()
	nodes := make([]*Server, 0, len(names))
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = n.Shutdown(context.Background())
		}
	})
	for _, name := range names {
		cfg.Name = name
		nodes = append(nodes, startServer(t, cfg))
	}
	return nodes
}
