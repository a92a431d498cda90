package server

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestTraceAcrossNodes: a user trace opened on node 1 sees the user's
// publications and disconnect on node 2, forwarded by node 2's copy of
// the trace, each event naming node 2.
func TestTraceAcrossNodes(t *testing.T) {
	setup := networkedEngines()["redis"]
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
	setup(t, &cfg)
	cfg.Name = "node1"
	n1 := startServer(t, cfg)
	cfg.Name = "node2"
	n2 := startServer(t, cfg)
	t.Cleanup(func() {
		_ = n1.Shutdown(context.Background())
		_ = n2.Shutdown(context.Background())
	})
	testenv.Eventually(t, "both nodes in info", 5*time.Second, func() bool { return len(n1.Hub().Nodes()) == 2 })

	tr, err := n1.Hub().Trace(hub.TraceUser, "alice", 256)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	c := connectClient(t, n2, "alice")
	c.MustSubscribe(2, "far", "")
	node2 := n2.Hub().NodeID()
	// The copy on node 2 starts when the lease arrives there: publish
	// until a publication comes back from node 2.
	testenv.Eventually(t, "a publication traced on node 2", 10*time.Second, func() bool {
		apiCall(t, n1, "publish", `{"channel":"far","data":{"n":1}}`)
		for {
			select {
			case e := <-tr.Events():
				if e.Type == hub.TracePublication && e.Node == node2 && e.User == "alice" && string(e.Data) == `{"n":1}` {
					return true
				}
			default:
				return false
			}
		}
	})
	apiCall(t, n1, "disconnect", `{"user":"alice"}`)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-tr.Events():
			if e.Type == hub.TraceDisconnect {
				if e.Node != node2 || e.User != "alice" || e.Client == "" {
					t.Fatalf("disconnect event %+v", e)
				}
				return
			}
		case <-deadline:
			t.Fatal("no disconnect event from node 2 within 10s")
		}
	}
}
