package stateoutput_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/stateoutput"
)

// TestSet: a set refuses a bad list whole, naming each field, and a
// batch one of its outputs fails is failed, naming that output.
func TestSet(t *testing.T) {
	_, err := stateoutput.OpenSet(t.Context(), []stateoutput.Config{
		{Name: "a", Type: "nats", NATS: stateoutput.NATSConfig{URL: "nats://127.0.0.1:4222"}},
		{Name: "a", Type: "sqs"},
		{Name: "b", Type: "postgresql"},
	})
	var fields []string
	for _, e := range optionerr.All(err) {
		fields = append(fields, e.Field)
	}
	if got, want := strings.Join(fields, " "), "[1].Name [1].Type [2].Postgres.DSN"; got != want {
		t.Fatalf("problems %v (%q), want fields %q", err, got, want)
	}

	dead := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	set, err := stateoutput.OpenSet(t.Context(), []stateoutput.Config{
		{Name: "events", Type: "redis_stream", RedisStream: stateoutput.RedisStreamConfig{Address: dead}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := set.OnChannelState(ctx, batch); err == nil || !strings.Contains(err.Error(), `channel state output "events"`) {
		t.Fatalf("a batch to a dead server: %v, want an error naming the output", err)
	}
}
