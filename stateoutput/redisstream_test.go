package stateoutput_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/stateoutput"
)

// TestRedisStreamOutput: each event of a batch is an entry of the stream,
// in order, with the fields channel, type and time_ms; maxlen trims the
// stream.
func TestRedisStreamOutput(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	prefix := "herald-test-stateoutput-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	c := redis.NewClient(&redis.Options{Addr: addr})
	// Cleanups run last first: the keys are deleted, then c closed.
	t.Cleanup(func() { _ = c.Close() })
	t.Cleanup(func() { testenv.DeleteRedisKeys(t, c, prefix) })
	stream := prefix + ":events"

	out, err := stateoutput.NewRedisStreamOutput(t.Context(), stateoutput.RedisStreamConfig{Address: addr, Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := out.Write(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	entries, err := c.XRange(t.Context(), stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(batch) {
		t.Fatalf("%d entries, want %d: %v", len(entries), len(batch), entries)
	}
	for i, want := range batch {
		v := entries[i].Values
		if v["channel"] != want.Channel || v["type"] != want.Type || v["time_ms"] != strconv.FormatInt(want.TimeMs, 10) {
			t.Fatalf("entry %d: %v, want %v", i, v, want)
		}
	}

	// maxlen: trimmed as events are added (about: XADD MAXLEN ~ trims
	// whole macro nodes, so a stream of a few hundred entries is cut).
	trimmed := prefix + ":trimmed"
	small, err := stateoutput.NewRedisStreamOutput(t.Context(), stateoutput.RedisStreamConfig{Address: addr, Stream: trimmed, MaxLen: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	for range 100 {
		if err := small.Write(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := c.XLen(context.Background(), trimmed).Result(); err != nil || n >= 100*int64(len(batch)) {
		t.Fatalf("trimmed stream holds %d entries (%v), want fewer than %d", n, err, 100*len(batch))
	}
}

// TestRedisStreamOutputDown: a server that does not answer fails the
// batch, for the hub to hand it over again.
func TestRedisStreamOutputDown(t *testing.T) {
	out, err := stateoutput.NewRedisStreamOutput(t.Context(), stateoutput.RedisStreamConfig{Address: "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := out.Write(ctx, batch); err == nil {
		t.Fatal("a write to no server succeeded")
	}
}
