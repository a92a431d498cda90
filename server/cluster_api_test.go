package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// nopHandler receives what an engine delivers and drops it.
type nopHandler struct{}

func (nopHandler) HandlePublication(string, *engine.Publication, engine.StreamPosition) {}
func (nopHandler) HandleJoin(string, *engine.ClientInfo)                                {}
func (nopHandler) HandleLeave(string, *engine.ClientInfo)                               {}
func (nopHandler) HandleControl([]byte)                                                 {}

// TestClusterWideAPI: channels and connections through one node's API see
// the subscribers of every node; a node that stops answering makes the
// answer partial, in bounded time, instead of holding it.
func TestClusterWideAPI(t *testing.T) {
	for _, name := range []string{"postgres", "redis"} {
		setup := networkedEngines()[name]
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.HTTPAPI.Key = "k"
			cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
			setup(t, &cfg)
			var nodes []*Server
			for _, n := range []string{"node1", "node2", "node3"} {
				cfg.Name = n
				nodes = append(nodes, startServer(t, cfg))
			}
			t.Cleanup(func() {
				for _, n := range nodes {
					_ = n.Shutdown(context.Background())
				}
			})
			n1, n2, n3 := nodes[0], nodes[1], nodes[2]
			testenv.Eventually(t, "three nodes", 10*time.Second, func() bool { return len(n1.Hub().Nodes()) == 3 })

			alice := connectClient(t, n2, "alice")
			alice.MustSubscribe(2, "room-a", "")
			alice.MustSubscribe(3, "room-b", "")
			bob := connectClient(t, n3, "bob")
			bob.MustSubscribe(2, "room-a", "")
			carol := connectClient(t, n1, "carol")
			carol.MustSubscribe(2, "other", "")

			if got := apiCall(t, n1, "channels", `{"pattern":"room-*"}`); got != `{"result":{"channels":{"room-a":{"num_clients":2},"room-b":{"num_clients":1}}}}` {
				t.Fatalf("channels through node 1: %s", got)
			}

			var res struct {
				Result struct {
					Connections []struct {
						Client, User, Transport, Protocol, Node string
						ConnectedAt                             int64 `json:"connected_at"`
						Channels                                []string
					}
					NextCursor string `json:"next_cursor"`
					Partial    bool
				}
				Error any
			}
			call := func(body string) {
				t.Helper()
				res.Result.Connections, res.Result.NextCursor = nil, ""
				if err := json.Unmarshal([]byte(apiCall(t, n1, "connections", body)), &res); err != nil || res.Error != nil {
					t.Fatalf("connections %s: %v %v", body, err, res.Error)
				}
			}
			call(`{"user":"alice"}`)
			if c := res.Result.Connections; len(c) != 1 || c[0].User != "alice" || c[0].Node != n2.Hub().NodeID() ||
				!slices.Equal(c[0].Channels, []string{"room-a", "room-b"}) || c[0].Transport != "websocket" || c[0].Protocol != "json" ||
				time.Since(time.UnixMilli(c[0].ConnectedAt)) > time.Minute {
				t.Fatalf("alice's connections: %+v", c)
			}
			call(`{"channel":"room-a"}`)
			var users []string
			for _, c := range res.Result.Connections {
				users = append(users, c.User)
			}
			if slices.Sort(users); !slices.Equal(users, []string{"alice", "bob"}) {
				t.Fatalf("room-a's connections: %v", users)
			}
			// Pages of 2 over 3 connections: 2 with a cursor, then 1.
			call(`{"limit":2}`)
			first := res.Result.Connections
			cursor := res.Result.NextCursor
			if len(first) != 2 || cursor == "" {
				t.Fatalf("first page: %+v cursor %q", first, cursor)
			}
			call(`{"limit":2,"cursor":"` + cursor + `"}`)
			if len(res.Result.Connections) != 1 || res.Result.NextCursor != "" || res.Result.Connections[0].Client <= cursor {
				t.Fatalf("second page: %+v", res.Result)
			}
			if got := apiCall(t, n1, "connections", `{"limit":5000}`); !strings.Contains(got, `"code":107`) || !strings.Contains(got, "limit") {
				t.Fatalf("limit over the maximum: %s", got)
			}

			// A node the cluster knows of that does not answer: announced by
			// a bare engine that sends its heartbeat and nothing else.
			eng, err := newEngine(cfg, "ghost", slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if err := eng.Start(t.Context(), nopHandler{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = eng.Close() })
			beat := []byte(`{"from":"ghost","node":{"uid":"ghost","name":"ghost"}}`)
			if err := eng.PublishControl(t.Context(), beat, ""); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, "the ghost node known", 10*time.Second, func() bool { return len(n1.Hub().Nodes()) == 4 })
			start := time.Now()
			got := apiCall(t, n1, "channels", `{"pattern":"room-*"}`)
			if took := time.Since(start); took > 4*time.Second {
				t.Fatalf("a silent node held the answer %v", took)
			}
			if !strings.Contains(got, `"room-a":{"num_clients":2}`) || !strings.Contains(got, `"partial":true,"missing_nodes":["ghost"]`) {
				t.Fatalf("channels with a silent node: %s", got)
			}
		})
	}
}

// TestNewNodeKnowsTheClusterAtOnce: a node that starts hears from the
// others within a round trip, not at their next heartbeat (3 s later), so
// that emulation requests and surveys reach it from the start.
func TestNewNodeKnowsTheClusterAtOnce(t *testing.T) {
	for _, name := range []string{"postgres", "redis"} {
		setup := networkedEngines()[name]
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			setup(t, &cfg)
			cfg.Name = "node1"
			n1 := startServer(t, cfg)
			t.Cleanup(func() { _ = n1.Shutdown(context.Background()) })
			// Let node 1's first heartbeat go by, so that only the answer
			// to node 2's can tell node 2 about it in time.
			testenv.Eventually(t, "node 1 knows itself", 5*time.Second, func() bool { return len(n1.Hub().Nodes()) == 1 })
			cfg.Name = "node2"
			n2 := startServer(t, cfg)
			t.Cleanup(func() { _ = n2.Shutdown(context.Background()) })
			testenv.Eventually(t, "node 2 knows node 1 before node 1's next heartbeat", 2*time.Second, func() bool {
				return len(n2.Hub().Nodes()) == 2
			})
		})
	}
}
