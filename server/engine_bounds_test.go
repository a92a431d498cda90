package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// The bounds issue 35 found missing were probed on the memory engine;
// these tests put the same requests to a whole server on each networked
// engine that keeps history, presence and map state (PostgreSQL, Redis;
// NATS keeps none of them) and on Redis sharded in two, so that a
// bound kept in one engine's code (reading a stream whole, counting keys)
// shows on every one.

// boundedEngines is networkedEngines but NATS, and the sharded Redis
// engine.
func boundedEngines() map[string]func(*testing.T, *config.Config) {
	engines := networkedEngines()
	delete(engines, "nats")
	engines["redis-sharded"] = func(t *testing.T, c *config.Config) {
		// Two deployments: the standalone server and the Sentinel set.
		addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
		sentinels := testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_ADDRS")
		master := testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_MASTER")
		c.Engine.Type = "redis"
		c.Engine.Redis.Shards = []config.RedisShardConfig{{Address: addr}, {Addresses: strings.Split(sentinels, ","), SentinelMaster: master}}
		c.Engine.Redis.Prefix = "herald-server-test-" + time.Now().Format("150405.000000")
	}
	return engines
}

// boundsServer is one server on engine name with history kept, the API's
// responses bounded to responseBound and map channels ("board:") of at
// most mapBound keys.
const (
	responseBound = 256 << 10
	mapBound      = 3
)

func boundsServer(t *testing.T, setup func(*testing.T, *config.Config)) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.HTTPAPI.MaxResponseSize = responseBound
	cfg.Channel.WithoutNamespace.AllowSubscribeForClient = true
	cfg.Channel.WithoutNamespace.HistorySize = 1000
	cfg.Channel.WithoutNamespace.HistoryTTL = time.Duration(5 * time.Minute)
	cfg.Channel.Namespaces = append(cfg.Channel.Namespaces, config.Namespace{Namespace: hub.Namespace{Name: "board", NamespaceOptions: hub.NamespaceOptions{
		SubscriptionType: hub.SubscriptionMap,
		Map:              hub.MapOptions{Mode: hub.MapPersistent, MaxKeys: mapBound},
	}}})
	setup(t, &cfg)
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// TestHistoryResponseBoundedOnEveryEngine: history with limit -1 of a
// stream of 200 × 4 KB (800 KB) is error 106 naming
// http_api.max_response_size on every engine that keeps history, and a
// read that fits is answered.
func TestHistoryResponseBoundedOnEveryEngine(t *testing.T) {
	for name, setup := range boundedEngines() {
		t.Run(name, func(t *testing.T) {
			s := boundsServer(t, setup)
			ch := "feed-" + strings.ReplaceAll(name, "-", "")
			data := `"` + strings.Repeat("x", 4<<10) + `"`
			for i := range 200 {
				if body := apiCall(t, s, "publish", `{"channel":"`+ch+`","data":`+data+`}`); !strings.Contains(body, `"result"`) {
					t.Fatalf("publish %d: %.300s", i, body)
				}
			}
			body := apiCall(t, s, "history", `{"channel":"`+ch+`","limit":-1}`)
			if len(body) > responseBound+1<<10 {
				t.Fatalf("history limit -1: a response of %d bytes, over the bound of %d", len(body), responseBound)
			}
			if !strings.Contains(body, `"code":106`) || !strings.Contains(body, "max_response_size") {
				t.Fatalf("history limit -1: %.300s, want error 106 naming max_response_size", body)
			}
			body = apiCall(t, s, "history", `{"channel":"`+ch+`","limit":10}`)
			if got := strings.Count(body, `"offset"`); got != 11 { // 10 publications and the stream's position
				t.Fatalf("history limit 10: %d offsets in %.300s", got, body)
			}
		})
	}
}

// TestPresenceResponseBoundedOnEveryEngine: the presence of a channel
// whose clients carry 8 KB of connection info each, 48 of them (384 KB),
// is error 106 on every engine that keeps presence.
func TestPresenceResponseBoundedOnEveryEngine(t *testing.T) {
	for name, setup := range boundedEngines() {
		t.Run(name, func(t *testing.T) {
			s := boundsServer(t, func(t *testing.T, c *config.Config) {
				setup(t, c)
				c.Channel.WithoutNamespace.Presence = true
			})
			ch := "crowd-" + strings.ReplaceAll(name, "-", "")
			info := `"` + strings.Repeat("i", 8<<10) + `"`
			for i := range 48 {
				c := jsonclient.New(t, wire.Dial(t, "ws://"+s.Addr()+WebSocketPath, protocol.TypeJSON), "secret")
				c.ConnectToken(testtoken.Connect(t, "secret", auth.ConnectClaims{User: fmt.Sprintf("user-%d", i), Info: json.RawMessage(info)}))
				c.MustSubscribe(2, ch, "")
			}
			testenv.Eventually(t, "48 clients in presence", 10*time.Second, func() bool {
				return strings.Contains(apiCall(t, s, "presence_stats", `{"channel":"`+ch+`"}`), `"num_clients":48`)
			})
			body := apiCall(t, s, "presence", `{"channel":"`+ch+`"}`)
			if len(body) > responseBound+1<<10 {
				t.Fatalf("presence: a response of %d bytes, over the bound of %d", len(body), responseBound)
			}
			if !strings.Contains(body, `"code":106`) || !strings.Contains(body, "max_response_size") {
				t.Fatalf("presence: %.300s, want error 106 naming max_response_size", body)
			}
		})
	}
}

// TestMapKeyBoundOnEveryEngine: a map channel of at most 3 keys refuses a
// fourth with error 106 on every engine that keeps map state, and a change
// of a key it holds goes through.
func TestMapKeyBoundOnEveryEngine(t *testing.T) {
	for name, setup := range boundedEngines() {
		t.Run(name, func(t *testing.T) {
			s := boundsServer(t, setup)
			ch := "board:keys-" + strings.ReplaceAll(name, "-", "")
			publish := func(key string) string {
				return apiCall(t, s, "map_publish", `{"channel":"`+ch+`","key":"`+key+`","data":{"v":1}}`)
			}
			for i := range mapBound {
				if body := publish(fmt.Sprint("k", i)); !strings.Contains(body, `"result"`) {
					t.Fatalf("key %d of %d: %.300s", i+1, mapBound, body)
				}
			}
			if body := publish("over"); !strings.Contains(body, `"code":106`) {
				t.Fatalf("a key over the bound of %d: %.300s, want error 106", mapBound, body)
			}
			if body := publish("k0"); !strings.Contains(body, `"result"`) {
				t.Fatalf("a change of a key the channel holds: %.300s", body)
			}
		})
	}
}

// TestCacheRecoveryReadsOneOnEveryEngine: a subscriber recovering in cache
// mode from a stream of 200 × 4 KB publications gets the latest one
// alone on every engine that keeps history, not the stream it missed.
func TestCacheRecoveryReadsOneOnEveryEngine(t *testing.T) {
	for name, setup := range boundedEngines() {
		t.Run(name, func(t *testing.T) {
			s := boundsServer(t, func(t *testing.T, c *config.Config) {
				setup(t, c)
				c.Channel.WithoutNamespace.ForceRecovery = true
				c.Channel.WithoutNamespace.ForceRecoveryMode = hub.RecoveryCache
			})
			ch := "cached-" + strings.ReplaceAll(name, "-", "")
			c := connectClient(t, s, "reader")
			first := c.MustSubscribe(2, ch, "")
			sub, _ := first["subscribe"].(map[string]any)
			epoch, _ := sub["epoch"].(string)
			c.Call(`{"id":3,"unsubscribe":{"channel":"` + ch + `"}}`)
			data := `"` + strings.Repeat("x", 4<<10) + `"`
			for i := range 200 {
				if body := apiCall(t, s, "publish", `{"channel":"`+ch+`","data":`+data+`}`); !strings.Contains(body, `"result"`) {
					t.Fatalf("publish %d: %.300s", i, body)
				}
			}
			got := c.Subscribe(4, ch, `"recover":true,"offset":0,"epoch":"`+epoch+`"`)
			res, ok := got["subscribe"].(map[string]any)
			if !ok {
				t.Fatalf("recovering subscribe: %v", got)
			}
			pubs, _ := res["publications"].([]any)
			if len(pubs) != 1 {
				t.Fatalf("cache recovery gave %d publications, want the latest alone", len(pubs))
			}
			if p, _ := pubs[0].(map[string]any); p["offset"] != float64(200) {
				t.Fatalf("cache recovery gave offset %v, want 200", p["offset"])
			}
		})
	}
}
