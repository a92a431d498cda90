package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/redis/go-redis/v9"
)

// TestConsumerFromConfig: a consumers entry of the configuration file runs
// on the node: a command a producer adds to a Redis stream reaches a
// WebSocket subscriber; '/readyz' lists the consumer and '/metrics' counts
// it. The HTTP API is off: consumers do not need it.
func TestConsumerFromConfig(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	stream := "herald_test_server_consumer_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() {
		_ = rdb.Del(context.Background(), stream, stream+":herald_lease:herald").Err()
		_ = rdb.Close()
	})
	cfg, err := config.Parse([]byte(`
consumers:
  - name: events
    enabled: true
    type: redis_stream
    redis_stream:
      address: ["redis://` + addr + `"]
      streams: [` + stream + `]
      consumer_group: herald
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	c := connectClient(t, s, "u")
	c.MustSubscribe(2, "news", "")
	if err := rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, Values: map[string]any{
		"method": "publish", "payload": `{"channel":"news","data":{"text":"hi"}}`,
	}}).Err(); err != nil {
		t.Fatal(err)
	}
	if got := c.Read(); !strings.Contains(got, `"data":{"text":"hi"}`) {
		t.Fatalf("subscriber got %s, want the publication", got)
	}
	r, err := http.Get("http://" + s.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready struct {
		Status    string            `json:"status"`
		Consumers map[string]string `json:"consumers"`
	}
	err = json.NewDecoder(r.Body).Decode(&ready)
	r.Body.Close()
	if err != nil || ready.Status != "ready" || ready.Consumers["events"] != "" || len(ready.Consumers) != 1 {
		t.Fatalf("/readyz: %+v %v, want ready with consumer events up", ready, err)
	}
	m, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(m.Body)
	m.Body.Close()
	for _, want := range []string{`herald_consumer_applied_total{consumer="events"} 1`, `herald_consumer_up{consumer="events"} 1`, `herald_consumer_failed_total{consumer="events"} 0`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestConsumerConfigProblems: a consumer's missing and wrong keys are
// named on start, enabled or not.
func TestConsumerConfigProblems(t *testing.T) {
	cfg, err := config.Parse([]byte(`
consumers:
  - name: a
    type: postgresql
    postgresql:
      outbox_table_name: "x; drop table y"
  - name: a
    type: sqs
  - name: r
    type: redis_stream
    redis_stream:
      address: ["redis://a:6379", "redis://b:6379"]
      streams: [s]
      consumer_group: g
  - name: u
    type: redis_stream
    redis_stream:
      address: ["redis://a:notaport/x"]
      streams: [s]
      consumer_group: g
`))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	for _, want := range []string{"consumers[0].postgresql.dsn: required", "consumers[0].postgresql.outbox_table_name", `consumers[1].name: "a" is used twice`, `consumers[1].type: "sqs"`, "consumers[2].redis_stream.address: one standalone server", "consumers[3].redis_stream.address: parse"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v\nwant it to say %q", err, want)
		}
	}
}

// TestConsumersTwoNodes: two nodes on the Redis engine run the same
// consumer; a producer writes every command twice (same idempotency key);
// the subscribers on both nodes receive each publication once and in
// order. Then node 1 shuts down: node 2 takes the source over and applies
// what follows. Once with Redis Streams, once with a PostgreSQL outbox
// (two nodes competing for its partition's advisory lock).
func TestConsumersTwoNodes(t *testing.T) {
	t.Run("redis_stream", func(t *testing.T) {
		addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
		stream := "herald_test_server_consumers_" + strconv.FormatInt(time.Now().UnixNano(), 36)
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() {
			_ = rdb.Del(context.Background(), stream, stream+":herald_lease:herald").Err()
			_ = rdb.Close()
		})
		consumersTwoNodes(t, addr, `
    type: redis_stream
    redis_stream:
      address: ["redis://`+addr+`"]
      streams: [`+stream+`]
      consumer_group: herald
      visibility_timeout: 1s
`, func(method, payload string) error {
			return rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, Values: map[string]any{"method": method, "payload": payload}}).Err()
		})
	})
	t.Run("postgresql", func(t *testing.T) {
		addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
		dsn := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
		table := "herald_test_outbox_" + strconv.FormatInt(time.Now().UnixNano(), 36)
		ctx := context.Background()
		db, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = db.Exec(context.Background(), "DROP TABLE IF EXISTS "+table+", "+table+"_dead_letter")
			_ = db.Close(context.Background())
		})
		// Centrifugo's outbox table, as a producer written for it has.
		if _, err := db.Exec(ctx, `CREATE TABLE `+table+` (
			id BIGSERIAL PRIMARY KEY, method text NOT NULL, payload JSONB NOT NULL,
			partition INTEGER NOT NULL default 0,
			created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		consumersTwoNodes(t, addr, `
    type: postgresql
    postgresql:
      dsn: "`+dsn+`"
      outbox_table_name: `+table+`
      num_partitions: 1
      partition_poll_interval: 100ms
`, func(method, payload string) error {
			_, err := db.Exec(ctx, "INSERT INTO "+table+" (method, payload) VALUES ($1, $2)", method, payload)
			return err
		})
	})
}

// TestConsumersTwoNodesJetStream is TestConsumersTwoNodes with a durable
// JetStream consumer, on a nats-server with JetStream of the test's own
// (the shared test server runs without it).
func TestConsumersTwoNodesJetStream(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	port := testenv.FreePort(t)
	cmd := exec.Command(testenv.Binary(t, "nats-server"), "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", t.TempDir())
	testenv.StartProcess(t, cmd).WaitListening(t, port, 10*time.Second)
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "COMMANDS", Subjects: []string{"commands.>"}}); err != nil {
		t.Fatal(err)
	}
	consumersTwoNodes(t, addr, `
    type: nats_jetstream
    nats_jetstream:
      url: `+url+`
      stream_name: COMMANDS
      subjects: [commands.>]
      durable_consumer_name: herald
      deliver_policy: all
      max_ack_pending: 1
      ack_wait: 1s
`, func(method, payload string) error {
		m := nats.NewMsg("commands.a")
		m.Header.Set("centrifugo-method", method)
		m.Data = []byte(payload)
		_, err := js.PublishMsg(context.Background(), m)
		return err
	})
}

// consumersTwoNodes runs TestConsumersTwoNodes with the consumer entry
// source (YAML under "- name: events\n    enabled: true") and its producer.
func consumersTwoNodes(t *testing.T, redisAddr, source string, produceOne func(method, payload string) error) {
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	newNode := func() *Server {
		cfg, err := config.Parse([]byte(`
engine:
  type: redis
  redis:
    address: ` + redisAddr + `
    prefix: herald-consumers-` + suffix + `
consumers:
  - name: events
    enabled: true` + source))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
		s := startServer(t, cfg)
		t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		return s
	}
	s1, s2 := newNode(), newNode()
	c1, c2 := connectClient(t, s1, "u"), connectClient(t, s2, "u")
	c1.MustSubscribe(2, "news", "")
	c2.MustSubscribe(2, "news", "")
	produce := func(from, to int) {
		for i := from; i <= to; i++ {
			for range 2 {
				if err := produceOne("publish", `{"channel":"news","data":{"n":`+strconv.Itoa(i)+`},"idempotency_key":"k`+strconv.Itoa(i)+`"}`); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	expect := func(c interface{ Next() map[string]any }, from, to int) {
		t.Helper()
		for i := from; i <= to; i++ {
			m := c.Next()
			push, _ := m["push"].(map[string]any)
			pub, _ := push["pub"].(map[string]any)
			data, _ := json.Marshal(pub["data"])
			if want := `{"n":` + strconv.Itoa(i) + `}`; string(data) != want {
				t.Fatalf("message %v, want the publication %s", m, want)
			}
		}
	}
	produce(1, 20)
	expect(c1, 1, 20)
	expect(c2, 1, 20)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	produce(21, 30)
	expect(c2, 21, 30)
}
