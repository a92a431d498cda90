package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/centrifugal/fdelta"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// priceBoard is a JSON document of ~1.5 KB where only tick changes from
// one publication to the next: what a Fossil delta shrinks to a few bytes.
func priceBoard(tick int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"tick":%d,"rows":[`, tick)
	for i := range 25 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"symbol":"SYM%02d","bid":%d.5,"ask":%d.75}`, i, 1000+i, 1001+i)
	}
	return b.String() + `]}`
}

// deltaChain rebuilds what a subscriber that negotiated Fossil delta is
// sent over JSON, as centrifuge-js does: data is a JSON string, the
// payload itself or a delta against the previous one.
type deltaChain struct {
	t    *testing.T
	prev []byte
}

// take applies one publication and reports whether it came as a delta.
func (d *deltaChain) take(pub map[string]any) (string, bool) {
	d.t.Helper()
	s, ok := pub["data"].(string)
	if !ok {
		d.t.Fatalf("data of a delta subscription is not a JSON string: %v", pub)
	}
	if pub["delta"] != true {
		d.prev = []byte(s)
		return s, false
	}
	out, err := fdelta.Apply(d.prev, []byte(s))
	if err != nil {
		d.t.Fatalf("apply a delta of %d bytes: %v", len(s), err)
	}
	d.prev = out
	return string(out), true
}

// nextPub returns the next publication pushed in ch.
func nextPub(t *testing.T, c *jsonclient.Client, ch string) map[string]any {
	t.Helper()
	for {
		m := c.Next()
		if p, ok := jsonclient.Path(m, "push", "pub").(map[string]any); ok && jsonclient.Path(m, "push", "channel") == ch {
			return p
		}
	}
}

// TestAPIPublishDelta: the server API's per-publish delta flag sends a
// publication as a Fossil delta to a subscriber that negotiated delta in
// a namespace without delta_publish, as Centrifugo 6.9.1 does
// (internal/api/api.go: publish, broadcast and map_publish set
// centrifuge's UseDelta from it); a publication without the flag goes in
// full. The flag travels from the node whose API was called to the node
// of the subscriber, on Redis and PostgreSQL, for stream publications and
// map changes alike.
func TestAPIPublishDelta(t *testing.T) {
	setups := networkedEngines()
	for _, name := range []string{"memory", "redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.HTTPAPI.Key = "k"
			cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{
				AllowSubscribeForClient: true, AllowedDeltaTypes: []string{hub.DeltaFossil},
				HistorySize: 10, HistoryTTL: time.Minute,
			}
			cfg.Channel.Namespaces = []config.Namespace{{Namespace: hub.Namespace{Name: "board", NamespaceOptions: hub.NamespaceOptions{
				AllowSubscribeForClient: true, AllowedDeltaTypes: []string{hub.DeltaFossil},
				SubscriptionType: hub.SubscriptionMap, Map: hub.MapOptions{Mode: hub.MapPersistent},
			}}}}
			nodes := 1
			if setup := setups[name]; setup != nil {
				setup(t, &cfg)
				nodes = 2
			}
			var servers []*Server
			for i := range nodes {
				cfg.Name = fmt.Sprintf("node%d", i+1)
				servers = append(servers, startServer(t, cfg))
			}
			t.Cleanup(func() {
				for _, s := range servers {
					_ = s.Shutdown(context.Background())
				}
			})
			api, subNode := servers[0], servers[nodes-1]
			testenv.Eventually(t, "every node in info", 10*time.Second, func() bool { return len(api.Hub().Nodes()) == nodes })

			c := connectClient(t, subNode, "alice")
			if res := c.MustSubscribe(2, "prices", `"delta":"fossil"`); res["delta"] != true {
				t.Fatalf("subscribe result without delta: %v", res)
			}
			chain := &deltaChain{t: t}
			for tick, step := range []struct{ method, body string }{
				{"publish", `{"channel":"prices","delta":true,"data":%s}`}, // the first goes in full
				{"publish", `{"channel":"prices","delta":true,"data":%s}`},
				{"publish", `{"channel":"prices","data":%s}`},
				{"broadcast", `{"channels":["prices"],"delta":true,"data":%s}`},
			} {
				if body := apiCall(t, api, step.method, fmt.Sprintf(step.body, priceBoard(tick))); !strings.Contains(body, `"result"`) || strings.Contains(body, `"error"`) {
					t.Fatalf("%s: %s", step.method, body)
				}
				pub := nextPub(t, c, "prices")
				got, delta := chain.take(pub)
				if got != priceBoard(tick) {
					t.Fatalf("publication %d rebuilt as %.80s", tick, got)
				}
				if wantDelta := tick == 1 || tick == 3; delta != wantDelta || delta && len(pub["data"].(string)) > 100 {
					t.Fatalf("%s %d: delta %v (%d bytes), want %v", step.method, tick, delta, len(pub["data"].(string)), wantDelta)
				}
			}

			state := c.Call(`{"id":3,"subscribe":{"channel":"board:a","type":1,"phase":2,"limit":10,"delta":"fossil"}}`)
			res, ok := state["subscribe"].(map[string]any)
			if !ok {
				t.Fatalf("map state: %v", state)
			}
			offset, _ := res["offset"].(float64) // absent: an empty stream
			live := c.Call(fmt.Sprintf(`{"id":4,"subscribe":{"channel":"board:a","type":1,"phase":1,"delta":"fossil","offset":%d,"epoch":%q}}`,
				int64(offset), res["epoch"]))
			if jsonclient.Path(live, "subscribe", "delta") != true {
				t.Fatalf("map live reply without delta: %v", live)
			}
			keyChain := &deltaChain{t: t}
			for tick, flag := range []string{`,"delta":true`, `,"delta":true`, ``} {
				body := fmt.Sprintf(`{"channel":"board:a","key":"k","data":%s%s}`, priceBoard(tick), flag)
				if got := apiCall(t, api, "map_publish", body); !strings.Contains(got, `"result"`) || strings.Contains(got, `"error"`) {
					t.Fatalf("map_publish: %s", got)
				}
				got, delta := keyChain.take(nextPub(t, c, "board:a"))
				if got != priceBoard(tick) || delta != (tick == 1) {
					t.Fatalf("map change %d: delta %v, rebuilt as %.80s", tick, delta, got)
				}
			}
		})
	}
}
