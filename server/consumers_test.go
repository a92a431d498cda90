package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/testenv"
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
      address: ` + addr + `
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
`))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	for _, want := range []string{"consumers[0]: postgresql.dsn: required", "postgresql.outbox_table_name", `consumers[1].name: "a" is used twice`, `consumers[1]: type "sqs"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v\nwant it to say %q", err, want)
		}
	}
}
