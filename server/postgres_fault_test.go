package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// streamClient subscribes to one history channel and keeps every
// publication it receives, in order. When the server unsubscribes it to
// recover (2500 and up) it subscribes again with recovery, and when its
// connection ends it reconnects to the same node and does the same, as
// the SDKs do; both are counted, and the test expects neither.
type streamClient struct {
	name string // for messages: node and subscriber number
	node *Server
	user string
	ch   string

	mu      sync.Mutex
	conn    *wsClient
	stopped bool

	// Written by the goroutine that runs the client; read after it ends.
	got          []jsonclient.Publication
	epoch        string
	problems     []string
	reconnects   []string // why each connection ended
	resubscribes []uint32 // the unsubscribe codes that made it recover

	last atomic.Uint64 // offset of the last publication received
}

// connect dials the node and subscribes, recovering from the last
// publication received when there is one.
func (c *streamClient) connect(ctx context.Context) error {
	cl, err := dialClient(ctx, c.node, c.user, 0)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		cl.Close()
		return errors.New("stopped")
	}
	c.conn = cl
	c.mu.Unlock()
	return c.subscribe(cl)
}

// subscribe sends the subscribe command, with recovery once the client has
// a position, and takes in the recovered publications.
func (c *streamClient) subscribe(cl *wsClient) error {
	req := jsonclient.SubscribeRequest{Channel: c.ch}
	if len(c.got) > 0 {
		req = jsonclient.SubscribeRequest{Channel: c.ch, Recover: true, Epoch: c.epoch, Offset: c.last.Load()}
	}
	id, err := cl.SubscribeAll([]jsonclient.SubscribeRequest{req})
	if err != nil {
		return err
	}
	m, err := cl.AwaitReply(id, time.Now().Add(30*time.Second), c.handle)
	if err != nil {
		return fmt.Errorf("subscribe %+v: %w", req, err)
	}
	res := m.Subscribe
	switch {
	case !res.Recoverable:
		c.problem("subscription is not recoverable: %+v", res)
	case req.Recover && !res.Recovered:
		c.problem("recovery from offset %d failed: epoch %q, top %d", req.Offset, res.Epoch, res.Offset)
	case !req.Recover:
		c.epoch = res.Epoch
	}
	for i := range res.Publications {
		c.accept(&res.Publications[i])
	}
	return nil
}

// run reads until stop, reconnecting when the connection ends. The
// context bounds it.
func (c *streamClient) run(ctx context.Context) {
	for {
		c.mu.Lock()
		cl, stopped := c.conn, c.stopped
		c.mu.Unlock()
		if stopped || ctx.Err() != nil {
			return
		}
		err := c.read(cl)
		cl.Close()
		if c.isStopped() || ctx.Err() != nil {
			return
		}
		c.reconnects = append(c.reconnects, err.Error())
		for {
			if err := c.connect(ctx); err == nil {
				break
			} else if c.isStopped() || ctx.Err() != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// read handles messages until the connection fails.
func (c *streamClient) read(cl *wsClient) error {
	for {
		m, err := cl.Next(time.Now().Add(time.Minute))
		if err != nil {
			return err
		}
		if p := m.Push; p != nil && p.Channel == c.ch && p.Unsubscribe != nil {
			if p.Unsubscribe.Code < 2500 {
				c.problem("unsubscribed with %d %q", p.Unsubscribe.Code, p.Unsubscribe.Reason)
				continue
			}
			c.resubscribes = append(c.resubscribes, p.Unsubscribe.Code)
			if err := c.subscribe(cl); err != nil {
				return err
			}
			continue
		}
		c.handle(m)
	}
}

// handle takes in a publication push of the channel.
func (c *streamClient) handle(m *jsonclient.Message) {
	if m.Push != nil && m.Push.Channel == c.ch && m.Push.Pub != nil {
		c.accept(m.Push.Pub)
	}
}

// accept appends a publication, noting any that does not follow the last
// one: a duplicate or a gap.
func (c *streamClient) accept(p *jsonclient.Publication) {
	if last := c.last.Load(); p.Offset != last+1 {
		c.problem("offset %d after %d", p.Offset, last)
	}
	c.got = append(c.got, *p)
	c.last.Store(max(c.last.Load(), p.Offset))
}

func (c *streamClient) problem(format string, args ...any) {
	if len(c.problems) < 20 {
		c.problems = append(c.problems, fmt.Sprintf(format, args...))
	}
}

func (c *streamClient) isStopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// stop ends run: it closes the connection, so that a read in progress
// returns.
func (c *streamClient) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.conn != nil {
		c.conn.Close()
	}
}

// streamFault is a fault injected while the stream runs, when the given
// fraction of it has been published.
type streamFault struct {
	at   float64
	name string
	run  func(ctx context.Context) error
}

// runPGStream runs three nodes with two subscribers each on a history
// channel with force_recovery, publishes a bounded stream through every
// node's API from concurrent publishers while the faults happen, and
// checks that every subscriber ends with the channel's whole stream,
// exactly once and in order, without reconnecting or resubscribing.
func runPGStream(t *testing.T, faults func(*pgCluster) []streamFault) {
	const (
		total      = 3000
		rate       = 500 // publications per second: a 6-second stream
		publishers = 6
		perNode    = 2
		ch         = "stream"
	)
	c := startPGCluster(t, 3, func(cfg *config.Config) {
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{
			AllowSubscribeForClient: true,
			HistorySize:             2 * total, HistoryTTL: time.Duration(10 * time.Minute), ForceRecovery: true,
		}
		// A client that does have to recover gets everything it missed.
		cfg.Client.RecoveryMaxPublicationLimit = 2 * total
	})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	var subs []*streamClient
	for i, s := range c.nodes {
		for j := range perNode {
			sc := &streamClient{name: fmt.Sprintf("node %d subscriber %d", i+1, j+1), node: s, user: fmt.Sprintf("u%d%d", i, j), ch: ch}
			if err := sc.connect(ctx); err != nil {
				t.Fatalf("%s: %v", sc.name, err)
			}
			subs = append(subs, sc)
		}
	}
	var readers sync.WaitGroup
	for _, sc := range subs {
		readers.Go(func() { sc.run(ctx) })
	}
	defer func() {
		for _, sc := range subs {
			sc.stop()
		}
		readers.Wait()
	}()

	var (
		sent, failed atomic.Int64
		pubs         sync.WaitGroup
	)
	start := time.Now()
	for p := range publishers {
		node := c.nodes[p%len(c.nodes)]
		pubs.Go(func() {
			for i := p; i < total; i += publishers {
				// An absolute schedule: a publisher held up by a fault
				// catches up afterwards instead of stretching the stream.
				select {
				case <-time.After(time.Until(start.Add(time.Duration(i) * time.Second / rate))):
				case <-ctx.Done():
					return
				}
				body := json.RawMessage(fmt.Sprintf(`{"channel":%q,"data":{"p":%d,"i":%d}}`, ch, p, i))
				for apiResult(ctx, node, "publish", body, nil) != nil {
					if ctx.Err() != nil {
						return
					}
					failed.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
				sent.Add(1)
			}
		})
	}
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		for _, f := range faults(c) {
			for sent.Load() < int64(f.at*total) {
				if ctx.Err() != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
			began := time.Now()
			if err := f.run(ctx); err != nil {
				t.Errorf("%s: %v", f.name, err)
				continue
			}
			t.Logf("%s at %d published: done in %v", f.name, sent.Load(), time.Since(began).Round(time.Millisecond))
		}
	}()
	pubs.Wait()
	<-faultsDone
	if ctx.Err() != nil {
		t.Fatalf("stream did not finish: %d of %d published", sent.Load(), total)
	}
	t.Logf("published %d in %v through three nodes (%d failed attempts retried)",
		total, time.Since(start).Round(time.Millisecond), failed.Load())

	stream := readStream(t, ctx, c.nodes[0], ch)
	checkStream(t, stream, total, publishers)
	top := uint64(len(stream))
	for _, sc := range subs {
		testenv.Eventually(t, sc.name+" to receive the whole stream", time.Minute, func() bool { return sc.last.Load() >= top })
	}
	// A duplicate would arrive right behind the stream: give it the chance.
	time.Sleep(200 * time.Millisecond)
	for _, sc := range subs {
		sc.stop()
	}
	readers.Wait()

	for i, n := range c.nodes {
		id := c.nodeIDs[i]
		reconnects, err := metricValue(ctx, n, "herald_postgres_listener_reconnects_total", `node="`+id+`"`)
		replayed, err2 := metricValue(ctx, n, "herald_postgres_replayed_total", `node="`+id+`"`)
		lost, err3 := metricValue(ctx, n, "herald_postgres_lost_total", `node="`+id+`"`)
		if err := errors.Join(err, err2, err3); err != nil {
			t.Errorf("node %d: %v", i+1, err)
		}
		t.Logf("node %d: listener reconnects %.0f, replayed %.0f, lost %.0f", i+1, reconnects, replayed, lost)
		if lost != 0 {
			t.Errorf("node %d counted %.0f lost publications", i+1, lost)
		}
	}
	for _, sc := range subs {
		for _, p := range sc.problems {
			t.Errorf("%s: %s", sc.name, p)
		}
		if len(sc.reconnects) > 0 || len(sc.resubscribes) > 0 {
			t.Errorf("%s had to reconnect %d times %q and resubscribe %d times (codes %v)",
				sc.name, len(sc.reconnects), sc.reconnects, len(sc.resubscribes), sc.resubscribes)
		}
		if len(sc.got) != len(stream) {
			t.Errorf("%s received %d publications, the stream holds %d", sc.name, len(sc.got), len(stream))
			continue
		}
		for k, p := range sc.got {
			if p.Offset != stream[k].Offset || string(p.Data) != string(stream[k].Data) {
				t.Errorf("%s: publication %d is offset %d %s, the stream has offset %d %s",
					sc.name, k, p.Offset, p.Data, stream[k].Offset, stream[k].Data)
				break
			}
		}
	}
}

// readStream reads the channel's whole history through the API, retrying
// while the node cannot reach PostgreSQL yet.
func readStream(t *testing.T, ctx context.Context, s *Server, ch string) []jsonclient.Publication {
	t.Helper()
	var res struct {
		Publications []jsonclient.Publication `json:"publications"`
		Offset       uint64                   `json:"offset"`
	}
	for {
		err := apiResult(ctx, s, "history", map[string]any{"channel": ch, "limit": -1}, &res)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("read the stream: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if uint64(len(res.Publications)) != res.Offset {
		t.Fatalf("history holds %d publications, top offset %d", len(res.Publications), res.Offset)
	}
	return res.Publications
}

// checkStream checks the channel's history: offsets 1..N, every
// publication of every publisher at least once (a publish retried after
// an ambiguous failure may be there twice) and each publisher's in the
// order it sent them.
func checkStream(t *testing.T, stream []jsonclient.Publication, total, publishers int) {
	t.Helper()
	seen := make([]bool, total)
	lastOf := make([]int, publishers)
	for p := range lastOf {
		lastOf[p] = -1
	}
	for k, pub := range stream {
		if pub.Offset != uint64(k+1) {
			t.Fatalf("history entry %d has offset %d", k, pub.Offset)
		}
		var d struct{ P, I int }
		if err := json.Unmarshal(pub.Data, &d); err != nil || d.P < 0 || d.P >= publishers || d.I < 0 || d.I >= total {
			t.Fatalf("history entry %d: unexpected data %s", k, pub.Data)
		}
		if d.I < lastOf[d.P] {
			t.Errorf("publisher %d: publication %d stored after %d", d.P, d.I, lastOf[d.P])
		}
		lastOf[d.P] = d.I
		seen[d.I] = true
	}
	for i, ok := range seen {
		if !ok {
			t.Errorf("publication %d is not in the history", i)
		}
	}
	if dups := len(stream) - total; dups > 0 {
		t.Logf("%d publications stored twice (publishes retried after an ambiguous failure)", dups)
	}
}

// listenerReconnects reads each node's count of listener reconnects.
func listenerReconnects(ctx context.Context, c *pgCluster) ([]float64, error) {
	out := make([]float64, len(c.nodes))
	for i, n := range c.nodes {
		v, err := metricValue(ctx, n, "herald_postgres_listener_reconnects_total", `node="`+c.nodeIDs[i]+`"`)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i+1, err)
		}
		out[i] = v
	}
	return out, nil
}

// awaitListenerReconnects waits until every node's listener has
// reconnected more often than before.
func awaitListenerReconnects(ctx context.Context, c *pgCluster, before []float64) error {
	for {
		now, err := listenerReconnects(ctx, c)
		if err == nil && allAbove(now, before) {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("listeners did not all reconnect (before %v, now %v): %v", before, now, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func allAbove(now, before []float64) bool {
	for i := range now {
		if now[i] <= before[i] {
			return false
		}
	}
	return true
}

// terminateListeners kills the listening backends of every node (their
// application_name is herald-listen:<node id>, see engine/postgres) and
// waits until each node listens again.
func terminateListeners(c *pgCluster) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		before, err := listenerReconnects(ctx, c)
		if err != nil {
			return err
		}
		conn, err := pgx.Connect(ctx, c.dsn)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		var names []string
		for _, id := range c.nodeIDs {
			names = append(names, "herald-listen:"+id)
		}
		var n int
		err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ANY($1)`,
			names).Scan(&n)
		if err != nil {
			return fmt.Errorf("terminate listeners: %w", err)
		}
		if n != len(names) {
			return fmt.Errorf("terminated %d listening backends, want %d (%v)", n, len(names), names)
		}
		return awaitListenerReconnects(ctx, c, before)
	}
}

// TestPostgresClusterListenersTerminated terminates the listening backends
// of all three nodes twice during a sustained stream.
func TestPostgresClusterListenersTerminated(t *testing.T) {
	runPGStream(t, func(c *pgCluster) []streamFault {
		return []streamFault{
			{at: 1.0 / 3, name: "terminate the listeners", run: terminateListeners(c)},
			{at: 2.0 / 3, name: "terminate the listeners again", run: terminateListeners(c)},
		}
	})
}

// TestPostgresClusterRestart restarts PostgreSQL during a sustained stream
// with HERALD_TEST_POSTGRES_RESTART, a command that restarts the test
// server and returns once it accepts connections again.
func TestPostgresClusterRestart(t *testing.T) {
	restart := strings.Fields(testenv.Require(t, "HERALD_TEST_POSTGRES_RESTART"))
	runPGStream(t, func(c *pgCluster) []streamFault {
		return []streamFault{{at: 1.0 / 3, name: "restart PostgreSQL", run: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			before, err := listenerReconnects(ctx, c)
			if err != nil {
				return err
			}
			if out, err := exec.CommandContext(ctx, restart[0], restart[1:]...).CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %w\n%s", restart, err, out)
			}
			return awaitListenerReconnects(ctx, c, before)
		}}}
	})
}
