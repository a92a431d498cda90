package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// pollHTTPBackend is a shared poll refresh backend in Centrifugo's HTTP
// shape: {channel, items: [{key, version}]} in, {result: {items: [{key,
// data, version}]}} out. It counts how often each key was asked.
type pollHTTPBackend struct {
	mu    sync.Mutex
	data  map[string]string
	ver   map[string]uint64
	asked map[string]int
}

func (b *pollHTTPBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Channel string `json:"channel"`
		Items   []struct {
			Key     string `json:"key"`
			Version uint64 `json:"version"`
		} `json:"items"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	type item struct {
		Key     string          `json:"key"`
		Data    json.RawMessage `json:"data"`
		Version uint64          `json:"version"`
	}
	var out struct {
		Result struct {
			Items []item `json:"items"`
		} `json:"result"`
	}
	b.mu.Lock()
	for _, it := range req.Items {
		b.asked[it.Key]++
		if d, ok := b.data[it.Key]; ok && b.ver[it.Key] > it.Version {
			out.Result.Items = append(out.Result.Items, item{Key: it.Key, Data: json.RawMessage(d), Version: b.ver[it.Key]})
		}
	}
	b.mu.Unlock()
	_ = json.NewEncoder(w).Encode(out)
}

// TestSharedPollTwoNodes: on each engine that connects nodes (PostgreSQL,
// Redis, NATS), clients on two nodes track a key of a shared poll
// channel; each node polls the HTTP refresh proxy for it once, and a
// shared_poll_publish through one node's API reaches the trackers on both
// at once.
func TestSharedPollTwoNodes(t *testing.T) {
	for name, setup := range networkedEngines() {
		t.Run(name, func(t *testing.T) { testSharedPollTwoNodes(t, setup) })
	}
}

func testSharedPollTwoNodes(t *testing.T, setup func(*testing.T, *config.Config)) {
	b := &pollHTTPBackend{data: map[string]string{"k": `{"n":1}`}, ver: map[string]uint64{"k": 1}, asked: map[string]int{}}
	backend := httptest.NewServer(b)
	t.Cleanup(backend.Close)
	const secret = "poll-secret-of-the-application"
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.SharedPoll.HMACSecretKey = secret
	cfg.Proxies = []config.ProxyEndpointConfig{{Name: "poll", URL: backend.URL, Timeout: 5 * time.Second}}
	ns := config.Namespace{}
	ns.Name = "poll"
	ns.NamespaceOptions = hub.NamespaceOptions{
		AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionSharedPoll,
		SharedPoll: hub.SharedPollOptions{ProxyName: "poll", Mode: hub.SharedPollVersioned, RefreshInterval: time.Hour, PublishEnabled: true},
	}
	cfg.Channel.Namespaces = append(cfg.Channel.Namespaces, ns)
	setup(t, &cfg)
	var nodes []*Server
	for _, name := range []string{"node1", "node2"} {
		cfg.Name = name
		s := startServer(t, cfg)
		t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		nodes = append(nodes, s)
	}
	testenv.Eventually(t, "both nodes in info", 10*time.Second, func() bool { return len(nodes[0].Hub().Nodes()) == 2 })
	const ch = "poll:board"
	var clients []*wsClient
	for i, s := range nodes {
		user := []string{"alice", "bob"}[i]
		cl := mustDial(t, s, user)
		id, err := cl.Send(map[string]any{"subscribe": map[string]any{"channel": ch, "type": 4}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.AwaitReply(id, time.Now().Add(10*time.Second), nil); err != nil {
			t.Fatalf("%s subscribe: %v", user, err)
		}
		sig := hub.SignTrack(secret, ch, user, []string{"k"}, time.Now().Unix(), time.Now().Add(time.Hour).Unix())
		id, err = cl.Send(map[string]any{"sub_refresh": map[string]any{"channel": ch, "type": 1,
			"track": []any{map[string]any{"signature": sig, "items": []any{map[string]any{"key": "k"}}}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.AwaitReply(id, time.Now().Add(10*time.Second), nil); err != nil {
			t.Fatalf("%s track: %v", user, err)
		}
		clients = append(clients, cl)
	}
	isKey := func(v uint64) func(*jsonclient.Push) bool {
		return func(p *jsonclient.Push) bool {
			return p.Channel == ch && p.Pub != nil && p.Pub.Key == "k" && p.Pub.Version == v
		}
	}
	for _, cl := range clients {
		cl.awaitPush(t, "the polled version 1", 10*time.Second, isKey(1))
	}
	// One poll per node: each node asked for the key once.
	b.mu.Lock()
	asked := b.asked["k"]
	b.mu.Unlock()
	if asked != 2 {
		t.Errorf("the backend was asked for the key %d times by 2 nodes with the refresh interval an hour, want 2", asked)
	}
	for i, s := range nodes {
		if v, err := metricValue(t.Context(), s, "herald_shared_poll_refresh_keys_total"); err != nil || v != 1 {
			t.Errorf("node %d: herald_shared_poll_refresh_keys_total %v (%v), want 1", i+1, v, err)
		}
	}

	mustAPI(t, nodes[0], "shared_poll_publish", map[string]any{"channel": ch, "key": "k", "data": map[string]int{"n": 2}, "version": 2}, nil)
	for _, cl := range clients {
		p := cl.awaitPush(t, "the published version 2", 10*time.Second, isKey(2))
		if string(p.Pub.Data) != `{"n":2}` {
			t.Errorf("%s got %s", cl.user, p.Pub.Data)
		}
	}
}
