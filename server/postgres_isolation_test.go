package server

import (
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"

	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestPostgresHistoryLockHoldsOnlyHistory: an outside transaction holds an
// exclusive lock on the history table and the streams' positions (which a
// subscribe to a channel with history reads and touches in one round trip)
// for three seconds while clients on both nodes keep subscribing to
// channels with history, whose subscribe waits for that lock. Meanwhile connects, pings and publications to
// channels without history keep flowing on both nodes; once the lock is
// gone, the waiting subscribes complete. With commands on the transport's
// read workers, the waiting subscribes held every worker and nothing else
// was read.
func TestPostgresHistoryLockHoldsOnlyHistory(t *testing.T) {
	c := startPGCluster(t, 2, func(cfg *config.Config) {
		cfg.Client.PingInterval = time.Duration(1500 * time.Millisecond)
		cfg.Client.PongTimeout = time.Duration(1400 * time.Millisecond)
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
		cfg.Channel.Namespaces = []config.Namespace{{Namespace: hub.Namespace{Name: "hist", NamespaceOptions: hub.NamespaceOptions{
			AllowSubscribeForClient: true, HistorySize: 10, HistoryTTL: time.Duration(time.Minute), ForceRecovery: true,
		}}}}
	})
	// One subscriber of a channel without history on each node.
	subs := []*wsClient{mustDial(t, c.nodes[0], "sub1"), mustDial(t, c.nodes[1], "sub2")}
	for _, s := range subs {
		s.mustSubscribe(t, "live")
	}

	lock := c.sqlConn(t)
	tx, err := lock.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(t.Context(), "LOCK TABLE "+c.schema+".history, "+c.schema+".streams IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	locked := time.Now()

	// More clients waiting on the lock than each node has read workers
	// (4 × GOMAXPROCS).
	// They read (and so answer pings) on goroutines of their own until
	// their subscribe is answered.
	const busyPerNode = 12
	var wg sync.WaitGroup
	errs := make(chan error, 2*busyPerNode)
	for i := range 2 * busyPerNode {
		b := mustDial(t, c.nodes[i%2], fmt.Sprintf("busy%d", i))
		id, err := b.SubscribeAll([]jsonclient.SubscribeRequest{{Channel: fmt.Sprintf("hist:%d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			m, err := b.AwaitReply(id, time.Now().Add(20*time.Second), nil)
			switch {
			case err != nil:
				errs <- fmt.Errorf("%s: subscribe after the lock: %w", b.user, err)
			case time.Since(locked) < 2500*time.Millisecond:
				errs <- fmt.Errorf("%s: subscribe answered %v after the lock was taken, before it was released: %+v", b.user, time.Since(locked), m)
			}
		})
	}

	// While the lock is held: connect to either node, publish through
	// either node's API, and see both subscribers (who answer pings as they
	// read) receive it.
	var lat []time.Duration
	for i := 0; time.Since(locked) < 2500*time.Millisecond; i++ {
		start := time.Now()
		cl, err := dialClient(t.Context(), c.nodes[i%2], fmt.Sprintf("new%d", i), 0)
		if err != nil {
			t.Fatalf("connect while history is locked: %v", err)
		}
		cl.Close()
		lat = append(lat, time.Since(start))

		start = time.Now()
		data := fmt.Sprintf(`{"i":%d}`, i)
		mustAPI(t, c.nodes[(i+1)%2], "publish", map[string]any{"channel": "live", "data": json.RawMessage(data)}, nil)
		for _, s := range subs {
			s.awaitPush(t, "publication "+data, 5*time.Second, func(p *jsonclient.Push) bool {
				return p.Pub != nil && string(p.Pub.Data) == data
			})
		}
		lat = append(lat, time.Since(start))
	}
	if time.Since(locked) > 3*time.Second {
		t.Fatalf("the work meant for the lock's first 2.5s took %v", time.Since(locked))
	}
	slices.Sort(lat)
	if worst := lat[len(lat)-1]; worst > 500*time.Millisecond {
		t.Fatalf("slowest of %d connects and publications while history was locked: %v (p50 %v)", len(lat), worst, lat[len(lat)/2])
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}

	// The subscribes that waited for the lock complete, and their clients
	// are still connected.
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
