package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/protocol"
)

// TestRelayAcrossTwoFloors: two floors on one real Redis, the API on one
// and the subscribers on the other, as the side-by-side runs its Redis
// floor. herald-bench's latency rig gets every publication on every
// subscriber exactly once: the subscriber node subscribed in Redis, with
// the confirmation awaited, before its subscribe replies.
func TestRelayAcrossTwoFloors(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	prefix := "floor_t_" + strconv.FormatInt(time.Now().UnixNano(), 36) + "."
	api := startFloor(t, Config{Writers: 1, APIKey: "k", RedisAddr: addr, RedisPrefix: prefix})
	subs := startFloor(t, Config{Writers: 2, Secret: testSecret, RedisAddr: addr, RedisPrefix: prefix})
	const subscribers = 10
	rig, err := loadgen.OpenRig(context.Background(), loadgen.LatencyConfig{
		Pool: loadgen.PoolConfig{
			URLs: []string{"ws://" + subs.Addr() + "/connection/websocket"}, Format: protocol.TypeProtobuf, Secret: testSecret,
		},
		Subscribers: subscribers, Workers: 2, Channel: "relayed",
		APIURL: "http://" + api.APIAddr() + "/api", APIKey: "k", APIConns: 2,
		Grace: 300 * time.Millisecond, SetupTimeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	sweepEveryCopy(t, rig, subscribers)
	// The API node has no subscriber, so it subscribed to nothing and
	// relayed nothing; the other got each publication once from Redis.
	a, s := api.Stats(), subs.Stats()
	if a.Publications == 0 || a.Relayed != 0 || a.Writes != 0 {
		t.Errorf("API node: %+v", a)
	}
	if s.Publications != 0 || s.Relayed != a.Publications || s.Writes < s.Relayed {
		t.Errorf("subscribers' node: %+v (API node published %d)", s, a.Publications)
	}
}

// TestRelayRefusesUnreachableRedis: a floor whose Redis does not answer
// does not start, and says which address it tried.
func TestRelayRefusesUnreachableRedis(t *testing.T) {
	_, err := Start(Config{Addr: "127.0.0.1:0", APIAddr: "127.0.0.1:0", Upgrade: "raw", Writers: 1, RedisAddr: "127.0.0.1:1"},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "redis 127.0.0.1:1") {
		t.Fatalf("Start with no Redis: %v", err)
	}
}
