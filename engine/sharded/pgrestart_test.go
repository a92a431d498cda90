package sharded

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestShardRestartPostgres restarts the PostgreSQL 18 cluster, shard 1 of
// a PostgreSQL 15 + 18 engine, while a publisher streams to a channel of
// shard 0: every publication of that stream succeeds and is delivered,
// and shard 1's channel serves again once its cluster is back. It holds
// the machine-wide PostgreSQL lock (pgShards), the rule for tests that
// stop a shared server.
func TestShardRestartPostgres(t *testing.T) {
	testenv.Require(t, "HERALD_TEST_POSTGRES18_DSN")
	restart := strings.Fields(testenv.Require(t, "HERALD_TEST_POSTGRES18_RESTART"))
	shards := pgShards(t)
	mk := func() *Engine {
		return enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) { return newPostgres(ctx, pgConfigs(shards, "")) })
	}
	subRec := newRecorder()
	sub, pub := mk(), mk()
	enginetest.StartEngine(t, sub, subRec)
	enginetest.StartEngine(t, pub, nopHandler{})
	up, down := channelOn(t, 2, 0, "up"), channelOn(t, 2, 1, "down")
	hist := engine.PublishOptions{HistorySize: 1000, HistoryTTL: time.Minute}
	call := func() (context.Context, context.CancelFunc) { return context.WithTimeout(t.Context(), 5*time.Second) }
	for _, ch := range []string{up, down} {
		ctx, cancel := call()
		if err := sub.Subscribe(ctx, ch); err != nil {
			t.Fatalf("Subscribe(%q): %v", ch, err)
		}
		if _, err := pub.Publish(ctx, ch, &engine.Publication{Data: []byte(`"before"`)}, hist); err != nil {
			t.Fatalf("Publish(%q): %v", ch, err)
		}
		cancel()
		subRec.await(t, ch, `"before"`)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var upSent int
	var upErrs []error
	var downFailed int
	wg.Add(2)
	go func() { // the live shard's stream
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			ctx, cancel := call()
			_, err := pub.Publish(ctx, up, &engine.Publication{Data: []byte(`"during ` + strconv.Itoa(upSent) + `"`)}, hist)
			cancel()
			if err != nil {
				upErrs = append(upErrs, err)
			}
			upSent++
		}
	}()
	go func() { // the restarted shard's channel, for the log
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			ctx, cancel := call()
			if _, err := pub.Publish(ctx, down, &engine.Publication{Data: []byte(`"during"`)}, hist); err != nil {
				downFailed++
			}
			cancel()
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	out, err := exec.CommandContext(ctx, restart[0], restart[1:]...).CombinedOutput()
	cancel()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("restart PostgreSQL 18: %v\n%s", err, out)
	}
	if len(upErrs) > 0 {
		t.Fatalf("%d of %d publications to the live shard's channel failed while the other shard restarted, first: %v", len(upErrs), upSent, upErrs[0])
	}
	for i := range upSent {
		subRec.await(t, up, `"during `+strconv.Itoa(i)+`"`)
	}
	t.Logf("live shard: %d publications during the restart, all delivered; restarted shard: %d publishes failed", upSent, downFailed)

	// The restarted shard serves its channel again: publishing succeeds and
	// reaches the subscriber once its listener has reconnected.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		ctx, cancel := call()
		data := `"after ` + strconv.Itoa(i) + `"`
		_, err := pub.Publish(ctx, down, &engine.Publication{Data: []byte(data)}, hist)
		cancel()
		if err == nil {
			select {
			case got := <-subRec.ch(down):
				if strings.HasPrefix(got, `"after`) {
					return
				}
			case <-time.After(200 * time.Millisecond):
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted shard's channel did not recover within 30s (last publish error: %v)", err)
		}
	}
}
