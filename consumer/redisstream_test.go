package consumer_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/consumer"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/redis/go-redis/v9"
)

// redisStreams are streams of their own for one test on the test Redis.
type redisStreams struct {
	addr   string
	rdb    *redis.Client
	prefix string
}

func newRedisStreams(t *testing.T, addr string) *redisStreams {
	t.Helper()
	if addr == "" {
		addr = testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	r := &redisStreams{addr: addr, rdb: rdb, prefix: "herald_test_stream_" + strconv.FormatInt(time.Now().UnixNano(), 36) + "_"}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		keys, _ := rdb.Keys(ctx, r.prefix+"*").Result()
		if len(keys) > 0 {
			_ = rdb.Del(ctx, keys...).Err()
		}
	})
	return r
}

// write adds a message as Centrifugo's producers do: the method and payload
// fields, or the envelope alone in payload when method is "".
func (r *redisStreams) write(t *testing.T, stream, method, payload string) {
	t.Helper()
	values := map[string]any{"payload": payload}
	if method != "" {
		values["method"] = method
	}
	if err := r.rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: r.prefix + stream, Values: values}).Err(); err != nil {
		t.Error(err)
	}
}

func (r *redisStreams) config(name, addr string, streams ...string) consumer.Config {
	var full []string
	for _, s := range streams {
		full = append(full, r.prefix+s)
	}
	if addr == "" {
		addr = r.addr
	}
	return consumer.Config{Name: name, Type: consumer.TypeRedisStream,
		Retry: consumer.Retry{MaxRetries: 2, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
		RedisStream: consumer.RedisStreamConfig{
			Address: []string{addr}, Streams: full, ConsumerGroup: "herald", VisibilityTimeout: time.Second,
		}}
}

// TestRedisStreamDuplicatesOnce: duplicates (same idempotency key) reach
// the subscriber once, in order; every message is acknowledged.
func TestRedisStreamDuplicatesOnce(t *testing.T) {
	r := newRedisStreams(t, "")
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	g := runGroup(t, r.config("streams", "", "s"), n.exec, "a")
	for i := 1; i <= 30; i++ {
		cmd := publishCmd("news", i, "k"+strconv.Itoa(i))
		r.write(t, "s", "publish", cmd)
		r.write(t, "s", "", `{"method":"publish","payload":`+cmd+`}`)
	}
	equal(t, sub.waitFor(t, 30, 10*time.Second), nums(30))
	eventually(t, 5*time.Second, "every message acknowledged", func() bool {
		p, err := r.rdb.XPending(context.Background(), r.prefix+"s", "herald").Result()
		return err == nil && p.Count == 0 && counter(t, g, "herald_consumer_applied_total", "streams") == 60
	})
	sub.settle(t, 30, 200*time.Millisecond)
}

// TestRedisStreamOrderTwoNodes: two nodes, three streams filled at once;
// each stream's publications arrive complete and in order, each applied
// once.
func TestRedisStreamOrderTwoNodes(t *testing.T) {
	r := newRedisStreams(t, "")
	n := startNode(t)
	const parts, each = 3, 60
	subs := make([]*subscriber, parts)
	var streams []string
	for p := range parts {
		subs[p] = subscribe(t, n.hub, "p"+strconv.Itoa(p))
		streams = append(streams, "s"+strconv.Itoa(p))
	}
	ga := runGroup(t, r.config("streams", "", streams...), n.exec, "a")
	gb := runGroup(t, r.config("streams", "", streams...), n.exec, "b")
	orderedTwoGroups(t, subs, each, "streams", [2]*consumer.Group{ga, gb}, 20*time.Second, func(p, i int) {
		r.write(t, "s"+strconv.Itoa(p), "publish", publishCmd("p"+strconv.Itoa(p), i, ""))
	})
}

// TestRedisStreamNodeKilledMidBatch: node a loses the network (its
// connections are black-holed) while applying a message; its lease
// expires, node b takes the stream, claims what a left unacknowledged
// (XAUTOCLAIM) and applies it. Nothing is lost; with idempotency keys
// nothing reaches the subscriber twice.
func TestRedisStreamNodeKilledMidBatch(t *testing.T) {
	r := newRedisStreams(t, "")
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	proxy := testenv.NewProxy(t, r.addr)
	for i := 1; i <= 40; i++ {
		r.write(t, "s", "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	xa, stuck := hangAt(n.exec, 10)
	ga := runGroup(t, r.config("streams", proxy.Addr(), "s"), xa, "a")
	await(t, stuck, "node a applying its 10th command")
	proxy.Blackhole()
	gb := runGroup(t, r.config("streams", "", "s"), n.exec, "b")
	equal(t, sub.waitFor(t, 40, 15*time.Second), nums(40))
	stopGroup(t, ga)
	sub.settle(t, 40, 200*time.Millisecond)
	if got := counter(t, gb, "herald_consumer_applied_total", "streams"); got < 31 {
		t.Fatalf("node b applied %v, want at least the 31 node a did not", got)
	}
}

// TestRedisStreamPoisonMessages: an unknown method, a message without a
// payload field and a command that keeps failing are moved to the
// dead-letter stream, counted, and the stream goes on.
func TestRedisStreamPoisonMessages(t *testing.T) {
	r := newRedisStreams(t, "")
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	x := &hookExec{next: n.exec}
	x.set(func(_ context.Context, _ string, body []byte) error {
		if string(body) == publishCmd("news", 3, "") {
			return &api.Error{Code: 100, Message: "internal server error"}
		}
		return nil
	})
	g := runGroup(t, r.config("streams", "", "s"), x, "a")
	r.write(t, "s", "publish", publishCmd("news", 1, ""))
	r.write(t, "s", "no_such_method", `{}`)
	if err := r.rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: r.prefix + "s", Values: map[string]any{"method": "publish"}}).Err(); err != nil {
		t.Fatal(err)
	}
	r.write(t, "s", "publish", publishCmd("news", 3, ""))
	r.write(t, "s", "publish", publishCmd("news", 2, ""))
	equal(t, sub.waitFor(t, 2, 10*time.Second), []string{`{"n":1}`, `{"n":2}`})
	eventually(t, 5*time.Second, "three messages moved aside", func() bool {
		n, _ := r.rdb.XLen(context.Background(), r.prefix+"s:dead_letter").Result()
		return n == 3
	})
	msgs, err := r.rdb.XRange(context.Background(), r.prefix+"s:dead_letter", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"104", "payload", "100"} {
		if e, _ := msgs[i].Values["herald_error"].(string); !strings.Contains(e, want) {
			t.Errorf("dead letter %d: herald_error %q, want it to say %s", i, e, want)
		}
	}
	if f, rt := counter(t, g, "herald_consumer_failed_total", "streams"), counter(t, g, "herald_consumer_retried_total", "streams"); f != 3 || rt != 2 {
		t.Fatalf("failed %v retried %v, want 3 and 2", f, rt)
	}
}

// TestRedisStreamServerRestart: the Redis server (one of the test's own,
// with an append-only file) restarts under a running consumer; the
// consumer reconnects and applies what was written before and after.
func TestRedisStreamServerRestart(t *testing.T) {
	bin := testenv.Binary(t, "redis-server")
	dir := t.TempDir()
	port := testenv.FreePort(t)
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--appendonly", "yes", "--appendfsync", "always", "--save", "")
		testenv.StartProcess(t, cmd).WaitListening(t, port, 10*time.Second)
		return cmd
	}
	cmd := start()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	r := newRedisStreams(t, addr)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	g := runGroup(t, r.config("streams", "", "s"), n.exec, "a")
	for i := 1; i <= 5; i++ {
		r.write(t, "s", "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	sub.waitFor(t, 5, 10*time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "redis-server stopped", func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	eventually(t, 10*time.Second, "the consumer noticing", func() bool { return g.Health()["streams"] != "" })
	start()
	for i := 6; i <= 10; i++ {
		r.write(t, "s", "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	equal(t, sub.waitFor(t, 10, 30*time.Second), nums(10))
	eventually(t, 10*time.Second, "healthy again", func() bool { return g.Health()["streams"] == "" })
	sub.settle(t, 10, 200*time.Millisecond)
}

// TestRedisStreamStopAcknowledgesApplied: a node stopped in the middle of
// a read acknowledges exactly what it applied and releases the stream's
// lease; the next node claims the rest at once and applies it in order.
func TestRedisStreamStopAcknowledgesApplied(t *testing.T) {
	r := newRedisStreams(t, "")
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	for i := 1; i <= 20; i++ {
		r.write(t, "s", "publish", publishCmd("news", i, ""))
	}
	x, stuck := hangAt(n.exec, 6)
	g := runGroup(t, r.config("streams", "", "s"), x, "a")
	await(t, stuck, "node a applying its 6th command")
	stopGroup(t, g)
	p, err := r.rdb.XPending(context.Background(), r.prefix+"s", "herald").Result()
	if err != nil || p.Count != 15 {
		t.Fatalf("pending after the stop: %+v %v, want the 15 not applied", p, err)
	}
	equal(t, sub.waitFor(t, 5, time.Second), nums(5))
	runGroup(t, r.config("streams", "", "s"), n.exec, "b")
	equal(t, sub.waitFor(t, 20, 5*time.Second), nums(20))
	sub.settle(t, 20, 200*time.Millisecond)
}
