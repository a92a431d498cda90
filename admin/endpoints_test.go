package admin_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/admin"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestOverview(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword}, false)
	e.login()
	e.connectUser("alice", "room")
	e.connectUser("bob", "room")
	if _, err := e.hub.Publish(context.Background(), "room", []byte(`{}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	status, body := e.do("GET", "api/overview", nil, nil)
	var o struct {
		Time  int64
		Nodes []struct {
			ID, Name, Version                       string
			Clients, Users, Channels, Subscriptions int
			Memory, Publications                    uint64
			Self                                    bool
		}
		Totals struct{ Clients int }
	}
	if status != 200 || json.Unmarshal(body, &o) != nil {
		t.Fatalf("overview: %d %s", status, body)
	}
	if len(o.Nodes) != 1 || o.Time == 0 {
		t.Fatalf("overview: %s", body)
	}
	n := o.Nodes[0]
	if !n.Self || n.ID != e.hub.NodeID() || n.Name != "admin-test" || n.Version != "9.9.9" || n.Clients != 2 || n.Users != 2 ||
		n.Channels != 1 || n.Subscriptions != 2 || n.Memory == 0 || n.Publications != 1 || o.Totals.Clients != 2 {
		t.Fatalf("overview node: %s", body)
	}
}

// Every server API method runs through the admin API in process, with
// the API's own answer; disconnect and unsubscribe act on live clients.
func TestCallMethods(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword}, false)
	e.login()
	alice := e.connectUser("alice", "room")
	e.connectUser("bob", "room")

	ch := e.call("channels", map[string]any{"pattern": "ro*"})
	if c, _ := ch["channels"].(map[string]any)["room"].(map[string]any); c == nil || c["num_clients"] != 2.0 {
		t.Fatalf("channels: %v", ch)
	}
	conns := e.call("connections", map[string]any{"user": "alice"})
	list, _ := conns["connections"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["user"] != "alice" {
		t.Fatalf("connections: %v", conns)
	}
	if p := e.call("presence", map[string]any{"channel": "room"}); len(p["presence"].(map[string]any)) != 2 {
		t.Fatalf("presence: %v", p)
	}
	for i := range 3 {
		if r := e.call("publish", map[string]any{"channel": "room", "data": map[string]int{"n": i}}); r["offset"] == nil {
			t.Fatalf("publish: %v", r)
		}
	}
	if r := e.call("broadcast", map[string]any{"channels": []string{"room", "other"}, "data": map[string]int{"n": 9}}); len(r["responses"].([]any)) != 2 {
		t.Fatalf("broadcast: %v", r)
	}
	h := e.call("history", map[string]any{"channel": "room", "limit": 2, "reverse": true})
	if pubs, _ := h["publications"].([]any); len(pubs) != 2 || pubs[0].(map[string]any)["offset"] != 4.0 {
		t.Fatalf("history page: %v", h)
	}
	e.call("unsubscribe", map[string]any{"user": "alice", "channel": "room"})
	testenv.Eventually(t, "alice unsubscribed", 5*time.Second, func() bool { return e.hub.Channels()["room"] == 1 })
	e.call("disconnect", map[string]any{"user": "alice"})
	select {
	case <-alice.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("alice not disconnected")
	}
	// The raw answer of an API error comes back as the API gives it.
	status, body := e.do("POST", "api/call/nope", "{}", map[string]string{admin.CSRFHeader: e.csrf})
	if status != http.StatusNotFound || !strings.Contains(string(body), "method not found") {
		t.Fatalf("unknown method: %d %s", status, body)
	}
	if status, _ := e.do("POST", "api/call/Bad-Name", "{}", map[string]string{admin.CSRFHeader: e.csrf}); status != http.StatusBadRequest {
		t.Fatalf("bad method name: %d, want 400", status)
	}
}

// The tail streams the channel's publications as server-sent events
// through an in-process hub client, and that client goes when the browser
// does.
func TestTail(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword}, false)
	e.login()
	if status, _ := e.do("GET", "api/tail", nil, nil); status != http.StatusBadRequest {
		t.Fatalf("tail without a channel: %d, want 400", status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/admin/api/tail?channel=room", nil)
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("tail: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	events := make(chan [2]string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		var ev string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				events <- [2]string{ev, strings.TrimPrefix(line, "data: ")}
			}
		}
	}()
	next := func() [2]string {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("tail stream ended")
			}
			return ev
		case <-ctx.Done():
			t.Fatal("no tail event in time")
		}
		return [2]string{}
	}
	if ev := next(); ev[0] != "ready" {
		t.Fatalf("first event %v, want ready", ev)
	}
	// The tail client is a connection of the admin transport.
	conns := e.call("connections", map[string]any{"channel": "room"})
	if l, _ := conns["connections"].([]any); len(l) != 1 || l[0].(map[string]any)["transport"] != admin.TransportName {
		t.Fatalf("tail connection: %v", conns)
	}
	if _, err := e.hub.Publish(ctx, "room", []byte(`{"text":"hi"}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := next()
	var pub struct {
		Data   map[string]string
		Offset int
	}
	if ev[0] != "pub" || json.Unmarshal([]byte(ev[1]), &pub) != nil || pub.Data["text"] != "hi" || pub.Offset != 1 {
		t.Fatalf("tail event %v, want the publication", ev)
	}
	cancel()
	for range events {
	}
	testenv.Eventually(t, "tail client gone", 5*time.Second, func() bool { return e.hub.NumClients() == 0 })
}
