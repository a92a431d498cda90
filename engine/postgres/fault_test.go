package postgres

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// streamNode is one node of a fault test.
type streamNode struct {
	name string
	e    *Engine
	rec  *recorder
}

// startNodes starts n nodes on one schema, each subscribed to ch.
func startNodes(t *testing.T, dsn, schema, ch string, n int) []*streamNode {
	t.Helper()
	var nodes []*streamNode
	for i := range n {
		rec := newRecorder()
		e := startEngine(t, testOptions(dsn, schema), rec)
		if err := e.Subscribe(t.Context(), ch); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, &streamNode{name: string(rune('A' + i)), e: e, rec: rec})
	}
	return nodes
}

// runStream publishes total publications to ch's history from publishers
// goroutines spread over the nodes, retrying failed publishes, while
// fault runs once progress reaches a third of the stream. It returns when
// every node has delivered the whole stream, and checks that each did so
// exactly once and in order.
func runStream(t *testing.T, nodes []*streamNode, ch string, total int, fault func()) {
	t.Helper()
	const publishers = 4
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var (
		sent     atomic.Int64
		failures atomic.Int64
		wg       sync.WaitGroup
	)
	opts := engine.PublishOptions{HistorySize: 2 * total, HistoryTTL: 10 * time.Minute}
	for p := range publishers {
		n := nodes[p%len(nodes)]
		wg.Go(func() {
			for i := p; i < total; i += publishers {
				data := fmt.Appendf(nil, `{"p":%d,"i":%d}`, p, i)
				for {
					if _, err := n.e.Publish(ctx, ch, &engine.Publication{Data: data}, opts); err == nil {
						break
					} else if ctx.Err() != nil {
						return
					}
					failures.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
				sent.Add(1)
			}
		})
	}
	faulted := make(chan struct{})
	wg.Go(func() {
		defer close(faulted)
		for sent.Load() < int64(total/3) {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
		fault()
	})
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("stream did not finish: %d of %d published", sent.Load(), total)
	}
	<-faulted
	t.Logf("published %d (%d failed attempts retried)", total, failures.Load())

	var pos engine.StreamPosition
	for {
		_, p, err := nodes[0].e.History(ctx, ch, engine.HistoryRequest{})
		if err == nil {
			pos = p
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("read position: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pos.Offset < uint64(total) {
		t.Fatalf("stream top %d, want at least %d", pos.Offset, total)
	}
	for _, n := range nodes {
		n.rec.awaitN(t, ch, int(pos.Offset))
		// Anything beyond the top would be a duplicate: give it a moment
		// to show up before checking.
		time.Sleep(100 * time.Millisecond)
		checkOffsets(t, "node "+n.name, n.rec.get(ch), pos.Offset, pos.Epoch)
		t.Logf("node %s: reconnects %.0f, replayed %.0f, gap repairs %.0f, lost %.0f", n.name,
			testutil.ToFloat64(n.e.metrics.reconnects), testutil.ToFloat64(n.e.metrics.replayed),
			testutil.ToFloat64(n.e.metrics.gapRepairs), testutil.ToFloat64(n.e.metrics.lost))
		if lost := testutil.ToFloat64(n.e.metrics.lost); lost != 0 {
			t.Errorf("node %s counted %.0f lost publications", n.name, lost)
		}
	}
}

// terminateListener kills e's listening backend and waits until e has
// reconnected.
func terminateListener(t *testing.T, dsn string, e *Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	before := testutil.ToFloat64(e.metrics.reconnects)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`,
		listenerAppName(e.NodeID())).Scan(&n)
	if err != nil || n != 1 {
		t.Errorf("terminate listener of %s: %d backends, %v", e.NodeID(), n, err)
		return
	}
	for testutil.ToFloat64(e.metrics.reconnects) == before {
		if ctx.Err() != nil {
			t.Errorf("node %s did not reconnect its listener", e.NodeID())
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestListenerTerminated kills the listening connections of three nodes
// during a sustained stream to a history channel: every node must still
// deliver every publication exactly once and in order.
func TestListenerTerminated(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	ch := "fault-listener:" + randomToken(4)
	nodes := startNodes(t, dsn, schema, ch, 3)
	runStream(t, nodes, ch, 6000, func() {
		terminateListener(t, dsn, nodes[2].e)
		terminateListener(t, dsn, nodes[1].e)
		terminateListener(t, dsn, nodes[0].e)
		terminateListener(t, dsn, nodes[2].e)
	})
	for _, n := range nodes {
		if testutil.ToFloat64(n.e.metrics.reconnects) == 0 {
			t.Errorf("node %s never reconnected", n.name)
		}
	}
}

// TestPostgresRestart restarts PostgreSQL during a sustained stream.
// It needs HERALD_TEST_POSTGRES_RESTART, a command that restarts the test
// server and returns once it accepts connections again.
func TestPostgresRestart(t *testing.T) {
	restart := testenv.Require(t, "HERALD_TEST_POSTGRES_RESTART")
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	ch := "fault-restart:" + randomToken(4)
	nodes := startNodes(t, dsn, schema, ch, 3)
	runStream(t, nodes, ch, 6000, func() {
		args := strings.Fields(restart)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Errorf("restart PostgreSQL: %v\n%s", err, out)
		}
	})
	for _, n := range nodes {
		if testutil.ToFloat64(n.e.metrics.reconnects) == 0 {
			t.Errorf("node %s never reconnected", n.name)
		}
	}
}
