package redis

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestBlackholeRedis black-holes every connection of one node to Redis
// (subscribing and command connections alike), as a NAT gateway that
// forgets the flows does, while it and another node publish to a history
// channel. The node must notice its silent subscribing connections within
// its health bound; every publish either succeeds or fails with an error
// within its bound; and once the path works again every node delivers
// every acknowledged publication exactly once, in order, with nothing
// delivered twice.
func TestBlackholeRedis(t *testing.T) {
	optsO := testOptions(t)
	proxy := testenv.NewProxy(t, optsO.Addrs[0])
	optsH := optsO
	optsH.Addrs = []string{proxy.Addr()}
	optsH.NodeID = "blackholed-" + randomToken(4)
	logs := testenv.NewLogWatch(slog.LevelWarn)
	optsH.Logger = slog.New(logs)
	ch := "blackhole_" + randomToken(4)

	type node struct {
		name string
		e    *Engine
		rec  *enginetest.Recorder
	}
	var nodes []node
	for i, opts := range []Config{optsH, optsO} {
		rec := enginetest.NewRecorder()
		e := startEngine(t, opts, rec)
		if err := e.Subscribe(t.Context(), ch); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, node{name: []string{"H (black-holed)", "O"}[i], e: e, rec: rec})
	}

	// A publish is bounded by its caller's deadline: the engine runs with
	// ContextTimeoutEnabled, so the deadline bounds its network waits.
	const publishTimeout = time.Second
	bound := publishTimeout + 500*time.Millisecond
	const publishers, perPublisher = 2, 400
	var (
		mu        sync.Mutex
		succeeded = make(map[string]bool)
		failed    int
		slowest   = make(map[string]time.Duration)
		wg        sync.WaitGroup
		progress  = make(chan struct{}, 2*publishers*perPublisher)
	)
	popts := engine.PublishOptions{HistorySize: 10 * publishers * perPublisher, HistoryTTL: 10 * time.Minute}
	for _, n := range nodes {
		for p := range publishers {
			wg.Go(func() {
				for i := range perPublisher {
					data := fmt.Sprintf(`{"n":%q,"p":%d,"i":%d}`, n.name[:1], p, i)
					ctx, cancel := context.WithTimeout(t.Context(), publishTimeout)
					start := time.Now()
					_, err := n.e.Publish(ctx, ch, &engine.Publication{Data: []byte(data)}, popts)
					took := time.Since(start)
					cancel()
					mu.Lock()
					slowest[n.name] = max(slowest[n.name], took)
					if err == nil {
						succeeded[data] = true
					} else {
						failed++
						if took > bound {
							t.Errorf("node %s: publish failed after %v, want at most %v: %v", n.name, took, bound, err)
						}
					}
					mu.Unlock()
					progress <- struct{}{}
					time.Sleep(time.Millisecond)
				}
			})
		}
	}
	for range publishers * perPublisher / 2 {
		<-progress
	}
	start := time.Now()
	proxy.Blackhole()
	// The health check pings a connection quiet for HealthInterval and
	// replaces one quiet for three.
	detected := logs.Await(t, "subscribing connection stopped answering pings, replacing it", 30*time.Second).Sub(start)
	healthBound := 4*optsH.HealthInterval + 500*time.Millisecond
	t.Logf("black-holed subscribing connection replaced after %v (bound %v)", detected.Round(time.Millisecond), healthBound)
	if detected > healthBound {
		t.Errorf("black-holed subscribing connection replaced after %v, want at most %v", detected, healthBound)
	}
	proxy.Restore()
	wg.Wait()

	mu.Lock()
	t.Logf("%d publishes succeeded, %d failed; slowest %v", len(succeeded), failed, slowest)
	mu.Unlock()
	if failed == 0 {
		t.Error("no publish failed: the hole caught nothing")
	}
	var top engine.StreamPosition
	testenv.Eventually(t, "the stream position", 30*time.Second, func() bool {
		_, sp, err := nodes[1].e.History(t.Context(), ch, engine.HistoryRequest{})
		top = sp
		return err == nil
	})
	if top.Offset < uint64(len(succeeded)) {
		t.Fatalf("stream top %d, below the %d acknowledged publications", top.Offset, len(succeeded))
	}
	for _, n := range nodes {
		got := n.rec.WaitForPublications(t, ch, int(top.Offset), 30*time.Second)
		seen := make(map[string]int, len(got))
		for i, d := range got {
			seen[string(d.Pub.Data)]++
			if d.Pub.Offset != uint64(i+1) {
				t.Errorf("node %s: delivery %d has offset %d", n.name, i, d.Pub.Offset)
				break
			}
		}
		for data, c := range seen {
			if c > 1 {
				t.Errorf("node %s: %s delivered %d times", n.name, data, c)
			}
		}
		for data := range succeeded {
			if seen[data] != 1 {
				t.Errorf("node %s: acknowledged %s delivered %d times", n.name, data, seen[data])
			}
		}
		st := n.e.Stats()
		t.Logf("node %s: %d delivered; resubscribed %d, replaced %d, replayed %d, lost %d", n.name, len(got),
			st.Resubscribed, st.Replaced, st.Replayed, st.Lost)
	}
	if errs := logs.Errors(); len(errs) > 0 {
		t.Errorf("the black-holed node logged errors: %q", errs)
	}
}

// TestBlackholeRedisPublishInDoubt catches a publish whose script Redis
// ran but whose reply was lost in a black hole: the caller must not get
// success for a publication that is then delivered twice. Redis holds the
// script (CLIENT PAUSE WRITE) until the hole is open, then runs it and
// answers into the hole; the path is restored at once, so that a client
// that retried on a new connection would publish a second time.
func TestBlackholeRedisPublishInDoubt(t *testing.T) {
	optsO := testOptions(t)
	proxy := testenv.NewProxy(t, optsO.Addrs[0])
	optsH := optsO
	optsH.Addrs = []string{proxy.Addr()}
	optsH.NodeID = "doubt-" + randomToken(4)
	ch := "doubt_" + randomToken(4)
	rec := enginetest.NewRecorder()
	o := startEngine(t, optsO, rec)
	h := startEngine(t, optsH, enginetest.NewRecorder())
	if err := o.Subscribe(t.Context(), ch); err != nil {
		t.Fatal(err)
	}
	popts := engine.PublishOptions{HistorySize: 100, HistoryTTL: 10 * time.Minute}
	if _, err := h.Publish(t.Context(), ch, &engine.Publication{Data: []byte(`"first"`)}, popts); err != nil {
		t.Fatal(err)
	}

	if err := o.client.Do(t.Context(), "client", "pause", 10000, "write").Err(); err != nil {
		t.Fatalf("CLIENT PAUSE: %v", err)
	}
	unpause := func() { _ = o.client.Do(context.Background(), "client", "unpause").Err() }
	defer unpause()
	type result struct {
		err  error
		took time.Duration
	}
	res := make(chan result, 1)
	// The caller's deadline is far beyond the client's read timeout, as
	// a client command's (command_timeout, 10 s) is.
	const publishTimeout = 10 * time.Second
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		defer cancel()
		start := time.Now()
		_, err := h.Publish(ctx, ch, &engine.Publication{Data: []byte(`"in doubt"`)}, popts)
		res <- result{err, time.Since(start)}
	}()
	testenv.Eventually(t, "the publish to wait in Redis", 10*time.Second, func() bool {
		list, err := o.client.ClientList(t.Context()).Result()
		if err != nil {
			return false
		}
		for line := range strings.Lines(list) {
			if strings.Contains(line, "name="+connectionName(optsH.NodeID)+" ") &&
				strings.Contains(line, "flags=b ") && strings.Contains(line, "cmd=evalsha ") {
				return true
			}
		}
		return false
	})
	proxy.Blackhole()
	unpause()
	// Restore only once the script has run, so that its reply, not the
	// request, is what the hole swallows.
	testenv.Eventually(t, "the publication to reach history", 10*time.Second, func() bool {
		pubs, _, err := o.History(t.Context(), ch, engine.HistoryRequest{Limit: -1})
		return err == nil && len(pubs) == 2
	})
	proxy.Restore()
	r := <-res
	t.Logf("publish in doubt returned after %v: %v", r.took.Round(time.Millisecond), r.err)
	pubs, _, err := o.History(t.Context(), ch, engine.HistoryRequest{Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	var copies int
	for _, p := range pubs {
		if string(p.Data) == `"in doubt"` {
			copies++
		}
	}
	if r.took > publishTimeout+500*time.Millisecond {
		t.Errorf("publish in doubt returned after %v, beyond its deadline %v", r.took, publishTimeout)
	}
	switch {
	case copies > 1:
		t.Errorf("the publication is in history %d times (publish returned %v)", copies, r.err)
	case r.err == nil && copies != 1:
		t.Errorf("publish succeeded but the publication is in history %d times", copies)
	}
	// Live delivery shows the same.
	publishHistoryOn(t, o, ch, `"last"`, popts)
	got := rec.WaitForPublications(t, ch, len(pubs)+1, 10*time.Second)
	checkOffsets(t, ch, got, len(pubs)+1)
}

func publishHistoryOn(t *testing.T, e *Engine, ch, data string, opts engine.PublishOptions) {
	t.Helper()
	if _, err := e.Publish(t.Context(), ch, &engine.Publication{Data: []byte(data)}, opts); err != nil {
		t.Fatal(err)
	}
}
