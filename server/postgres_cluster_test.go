package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// pgCluster is several whole Herald nodes in this process, each with its
// own engine (pools and listening connection) and listener, on one
// PostgreSQL database and a schema no other test uses.
type pgCluster struct {
	dsn, schema string
	nodes       []*Server
	// nodeIDs are the ids under which the nodes' engines appear in
	// PostgreSQL and in their metrics' node label.
	nodeIDs []string
}

// startPGCluster takes the PostgreSQL test lock for the test and starts n
// nodes with the configuration configure adjusts. The nodes shut down and
// the schema is dropped when the test ends.
func startPGCluster(t *testing.T, n int, configure func(*config.Config)) *pgCluster {
	t.Helper()
	dsn := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
	testenv.LockPostgres(t)
	c := &pgCluster{dsn: dsn, schema: "herald_srv_" + strings.ToLower(rand.Text()[:12])}
	// Registered first, so it runs after the nodes have shut down.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", c.schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+c.schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", c.schema, err)
		}
	})
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Engine.Type = "postgres"
	cfg.Engine.Postgres.DSN = dsn
	cfg.Engine.Postgres.Schema = c.schema
	cfg.Shutdown.DrainWindow = time.Duration(50 * time.Millisecond)
	if configure != nil {
		configure(&cfg)
	}
	for i := range n {
		cfg.Name = fmt.Sprintf("node%d", i+1)
		s := startServer(t, cfg)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.Shutdown(ctx); err != nil {
				t.Errorf("shut down %s: %v", cfg.Name, err)
			}
		})
		c.nodes = append(c.nodes, s)
		c.nodeIDs = append(c.nodeIDs, engineNodeID(t, s))
	}
	return c
}

// sql runs statements on a connection of the test's own, as an
// application publishing from its transactions would.
func (c *pgCluster) sqlConn(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// engineNodeID is the id under which s's engine appears in PostgreSQL
// (its listening connection's application_name ends with it).
func engineNodeID(t *testing.T, s *Server) string {
	t.Helper()
	e, ok := s.Hub().Engine().(interface{ NodeID() string })
	if !ok {
		t.Fatalf("engine %T has no node id", s.Hub().Engine())
	}
	return e.NodeID()
}

// TestPostgresThreeNodes runs three nodes on the PostgreSQL engine and
// checks from real clients that publications, presence, join/leave and
// disconnects cross nodes.
func TestPostgresThreeNodes(t *testing.T) {
	c := startPGCluster(t, 3, func(cfg *config.Config) {
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{
			AllowSubscribeForClient: true,
			Presence:                true, JoinLeave: true, ForcePushJoinLeave: true,
			HistorySize: 100, HistoryTTL: time.Duration(time.Minute), ForceRecovery: true,
		}
	})
	n1, n2, n3 := c.nodes[0], c.nodes[1], c.nodes[2]

	var info struct {
		Nodes []struct {
			Name string `json:"name"`
		} `json:"nodes"`
	}
	testenv.Eventually(t, "node 2's API to list all three nodes", 15*time.Second, func() bool {
		mustAPI(t, n2, "info", struct{}{}, &info)
		return len(info.Nodes) == 3
	})

	const room = "room"
	users := []string{"alice", "bob", "carol"}
	clients := make([]*wsClient, 3)
	for i, s := range c.nodes {
		clients[i] = mustDial(t, s, users[i])
	}
	alice, bob, carol := clients[0], clients[1], clients[2]

	// Joins reach subscribers on other nodes.
	alice.mustSubscribe(t, room)
	bob.mustSubscribe(t, room)
	joined := func(user string) func(*jsonclient.Push) bool {
		return func(p *jsonclient.Push) bool { return p.Channel == room && p.Join != nil && p.Join.Info.User == user }
	}
	alice.awaitPush(t, "bob's join (node 2 → node 1)", 10*time.Second, joined("bob"))
	carol.mustSubscribe(t, room)
	alice.awaitPush(t, "carol's join (node 3 → node 1)", 10*time.Second, joined("carol"))
	bob.awaitPush(t, "carol's join (node 3 → node 2)", 10*time.Second, joined("carol"))

	// Presence read through another node's API counts every node's clients.
	var stats struct {
		NumClients int `json:"num_clients"`
		NumUsers   int `json:"num_users"`
	}
	mustAPI(t, n3, "presence_stats", map[string]string{"channel": room}, &stats)
	if stats.NumClients != 3 || stats.NumUsers != 3 {
		t.Errorf("presence_stats through node 3: %d clients, %d users; want 3 and 3", stats.NumClients, stats.NumUsers)
	}
	var presence struct {
		Presence map[string]struct {
			User string `json:"user"`
		} `json:"presence"`
	}
	mustAPI(t, n1, "presence", map[string]string{"channel": room}, &presence)
	var present []string
	for id, p := range presence.Presence {
		present = append(present, p.User)
		if i := slices.Index(users, p.User); i >= 0 && id != clients[i].client {
			t.Errorf("presence lists %s as client %s, want %s", p.User, id, clients[i].client)
		}
	}
	if slices.Sort(present); !slices.Equal(present, users) {
		t.Errorf("presence through node 1: %v, want %v", present, users)
	}

	// A publication through any node's API reaches every node, in offset
	// order.
	for i, s := range c.nodes {
		mustAPI(t, s, "publish", map[string]any{"channel": room, "data": map[string]int{"via": i + 1}}, nil)
	}
	for i, cl := range clients {
		for want := 1; want <= 3; want++ {
			p := cl.awaitPush(t, fmt.Sprintf("publication %d on node %d", want, i+1), 10*time.Second,
				func(p *jsonclient.Push) bool { return p.Channel == room && p.Pub != nil })
			if wantData := fmt.Sprintf(`{"via":%d}`, want); p.Pub.Offset != uint64(want) || string(p.Pub.Data) != wantData {
				t.Errorf("node %d: got offset %d %s, want offset %d %s", i+1, p.Pub.Offset, p.Pub.Data, want, wantData)
			}
		}
	}

	// A leave reaches the other nodes, and presence drops the client.
	if _, err := bob.Send(map[string]any{"unsubscribe": map[string]string{"channel": room}}); err != nil {
		t.Fatal(err)
	}
	left := func(p *jsonclient.Push) bool {
		return p.Channel == room && p.Leave != nil && p.Leave.Info.User == "bob"
	}
	alice.awaitPush(t, "bob's leave (node 2 → node 1)", 10*time.Second, left)
	carol.awaitPush(t, "bob's leave (node 2 → node 3)", 10*time.Second, left)
	mustAPI(t, n1, "presence_stats", map[string]string{"channel": room}, &stats)
	if stats.NumClients != 2 || stats.NumUsers != 2 {
		t.Errorf("presence_stats after bob left: %d clients, %d users; want 2 and 2", stats.NumClients, stats.NumUsers)
	}

	// A user disconnected through one node's API is disconnected on every
	// node; other users stay.
	daves := make([]*wsClient, 3)
	for i, s := range c.nodes {
		daves[i] = mustDial(t, s, "dave")
	}
	mustAPI(t, n2, "disconnect", map[string]string{"user": "dave"}, nil)
	for i, d := range daves {
		code, err := d.AwaitClose(10 * time.Second)
		if err != nil || code != 3503 {
			t.Errorf("dave on node %d: want close 3503, got %d %v", i+1, code, err)
		}
	}
	mustAPI(t, n2, "publish", map[string]any{"channel": room, "data": "after"}, nil)
	for _, cl := range []*wsClient{alice, carol} {
		p := cl.awaitPush(t, "the publication after the disconnect", 10*time.Second,
			func(p *jsonclient.Push) bool { return p.Channel == room && p.Pub != nil })
		if p.Pub.Offset != 4 {
			t.Errorf("%s: got offset %d after the disconnect, want 4", cl.user, p.Pub.Offset)
		}
	}
}

// TestPostgresTransactionalPublishReachesClient publishes from SQL inside
// transactions: a client on a node gets the committed publication once,
// with the offset the function returned, and never the rolled-back one.
func TestPostgresTransactionalPublishReachesClient(t *testing.T) {
	c := startPGCluster(t, 2, func(cfg *config.Config) {
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{
			AllowSubscribeForClient: true,
			HistorySize:             10, HistoryTTL: time.Duration(time.Minute), ForceRecovery: true,
		}
	})
	const ch = "orders"
	cl := mustDial(t, c.nodes[1], "alice")
	if sub := cl.mustSubscribe(t, ch); !sub.Recoverable || sub.Offset != 0 {
		t.Fatalf("subscribe: %+v, want a recoverable stream at offset 0", sub)
	}
	conn := c.sqlConn(t)
	ctx := t.Context()
	publish := `SELECT ` + c.schema + `.publish($1, $2::jsonb, 10, '60 seconds')`
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	exec("BEGIN")
	var off uint64
	if err := conn.QueryRow(ctx, publish, ch, `{"rolled":"back"}`).Scan(&off); err != nil {
		t.Fatal(err)
	}
	exec("ROLLBACK")
	exec("BEGIN")
	if err := conn.QueryRow(ctx, publish, ch, `{"x":1}`).Scan(&off); err != nil {
		t.Fatal(err)
	}
	exec("COMMIT")
	if off != 1 {
		t.Errorf("committed publish returned offset %d, want 1 (the rolled-back one must not use an offset)", off)
	}
	// The marker goes through the other node's API after the commit: once
	// the client has it, anything published before would have arrived.
	var marker struct {
		Offset uint64 `json:"offset"`
	}
	mustAPI(t, c.nodes[0], "publish", map[string]any{"channel": ch, "data": "marker"}, &marker)

	var got []jsonclient.Publication
	deadline := time.Now().Add(10 * time.Second)
	for len(got) == 0 || string(got[len(got)-1].Data) != `"marker"` {
		m, err := cl.Next(deadline)
		if err != nil {
			t.Fatalf("waiting for the marker: %v (got %d publications)", err, len(got))
		}
		if m.Push != nil && m.Push.Pub != nil {
			got = append(got, *m.Push.Pub)
		}
	}
	// PostgreSQL prints jsonb with a space after the colon.
	want := []jsonclient.Publication{{Data: json.RawMessage(`{"x": 1}`), Offset: off}, {Data: json.RawMessage(`"marker"`), Offset: marker.Offset}}
	if len(got) != len(want) {
		t.Fatalf("client got %d publications %v, want %v", len(got), got, want)
	}
	for i := range want {
		if got[i].Offset != want[i].Offset || string(got[i].Data) != string(want[i].Data) {
			t.Errorf("publication %d: offset %d %s, want offset %d %s", i, got[i].Offset, got[i].Data, want[i].Offset, want[i].Data)
		}
	}
}

// TestPostgresPayloadSizes sends payloads around PostgreSQL's 8000-byte
// NOTIFY limit and of 1 MiB through one node's API to a client on
// another, with and without history.
func TestPostgresPayloadSizes(t *testing.T) {
	const maxPayload = 1 << 20
	c := startPGCluster(t, 2, func(cfg *config.Config) {
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
		cfg.Channel.Namespaces = []config.Namespace{{Namespace: hub.Namespace{Name: "hist", NamespaceOptions: hub.NamespaceOptions{
			AllowSubscribeForClient: true,
			HistorySize:             10, HistoryTTL: time.Duration(time.Minute), ForceRecovery: true,
		}}}}
		cfg.HTTPAPI.MaxBodySize = 4 * maxPayload
		cfg.WebSocket.MaxMessageSize = 4 * maxPayload
		cfg.Client.QueueMaxSize = 16 * maxPayload
	})
	cl, err := dialClient(t.Context(), c.nodes[1], "alice", 4*maxPayload)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	sizes := []int{100, 7999, 8000, 8001, maxPayload}
	for _, ch := range []string{"plain", "hist:big"} {
		cl.mustSubscribe(t, ch)
		for _, size := range sizes {
			mustAPI(t, c.nodes[0], "publish", map[string]any{"channel": ch, "data": json.RawMessage(payloadOf(size))}, nil)
		}
		for i, size := range sizes {
			p := cl.awaitPush(t, fmt.Sprintf("%d-byte publication in %s", size, ch), 20*time.Second,
				func(p *jsonclient.Push) bool { return p.Channel == ch && p.Pub != nil })
			if want := payloadOf(size); string(p.Pub.Data) != want {
				t.Errorf("%s: publication %d: got %d bytes, want %d (%.40s…)", ch, i, len(p.Pub.Data), size, p.Pub.Data)
			}
			if wantOffset := uint64(i + 1); ch == "hist:big" && p.Pub.Offset != wantOffset {
				t.Errorf("%s: %d-byte publication has offset %d, want %d", ch, size, p.Pub.Offset, wantOffset)
			}
		}
	}
}

// payloadOf is a JSON string of exactly size bytes whose content changes
// along its length, so that a truncated or shifted copy differs.
func payloadOf(size int) string {
	var b strings.Builder
	b.Grow(size)
	b.WriteByte('"')
	for i := 0; b.Len() < size-1; i++ {
		b.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[i%36])
		if i%1000 == 999 && b.Len() < size-1 {
			b.WriteByte('-')
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestPostgresManyChannels subscribes 100 connections of one node to 100
// channels each, and checks that one publication per channel, through the
// API of another node, reaches each subscriber once.
func TestPostgresManyChannels(t *testing.T) {
	const conns, perConn = 100, 100
	c := startPGCluster(t, 2, func(cfg *config.Config) {
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
		cfg.Client.ChannelLimit = perConn
	})
	subNode, pubNode := c.nodes[0], c.nodes[1]
	channel := func(conn, i int) string { return fmt.Sprintf("many-%03d-%03d", conn, i) }
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	clients := make([]*wsClient, conns)
	for i := range clients {
		cl, err := dialClient(ctx, subNode, fmt.Sprintf("u%03d", i), 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		clients[i] = cl
	}
	// Subscribe: each connection sends its 100 subscribe commands in one
	// frame, all connections at once.
	start := time.Now()
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Go(func() {
			reqs := make([]jsonclient.SubscribeRequest, perConn)
			for j := range reqs {
				reqs[j] = jsonclient.SubscribeRequest{Channel: channel(i, j)}
			}
			var refused error
			first, err := cl.SubscribeAll(reqs)
			if err == nil {
				_, err = cl.AwaitReply(first+perConn-1, time.Now().Add(time.Minute), func(m *jsonclient.Message) {
					if m.Error != nil && refused == nil {
						refused = fmt.Errorf("subscribe %d: %w", m.ID, m.Error)
					}
				})
			}
			if err = errors.Join(err, refused); err != nil {
				errs <- fmt.Errorf("connection %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d subscriptions on node 1 in %v", conns*perConn, time.Since(start).Round(time.Millisecond))

	// Publish: batches of 100 publish commands through node 2's API, 8
	// requests at a time.
	start = time.Now()
	batches := make(chan int, conns)
	for i := range conns {
		batches <- i
	}
	close(batches)
	pubErrs := make(chan error, conns)
	for range 8 {
		wg.Go(func() {
			for i := range batches {
				cmds := make([]map[string]any, perConn)
				for j := range cmds {
					cmds[j] = map[string]any{"publish": map[string]any{"channel": channel(i, j), "data": map[string]int{"c": i, "i": j}}}
				}
				body, _ := json.Marshal(map[string]any{"commands": cmds})
				b, err := apiPost(ctx, pubNode, "batch", body)
				if err == nil && strings.Contains(string(b), `"error"`) {
					err = fmt.Errorf("batch %d: %.300s", i, b)
				}
				if err != nil {
					pubErrs <- err
					return
				}
			}
		})
	}
	// Receive: every connection gets exactly its channels' publications.
	recvErrs := make(chan error, conns)
	for i, cl := range clients {
		wg.Go(func() {
			seen := make(map[string]bool, perConn)
			deadline := time.Now().Add(time.Minute)
			for len(seen) < perConn {
				m, err := cl.Next(deadline)
				if err != nil {
					recvErrs <- fmt.Errorf("connection %d: %d of %d publications: %w", i, len(seen), perConn, err)
					return
				}
				if m.Push == nil || m.Push.Pub == nil {
					continue
				}
				var d struct{ C, I int }
				if err := json.Unmarshal(m.Push.Pub.Data, &d); err != nil || m.Push.Channel != channel(d.C, d.I) || d.C != i {
					recvErrs <- fmt.Errorf("connection %d: publication %s in %s is not one of its own", i, m.Push.Pub.Data, m.Push.Channel)
					return
				}
				if seen[m.Push.Channel] {
					recvErrs <- fmt.Errorf("connection %d: %s delivered twice", i, m.Push.Channel)
					return
				}
				seen[m.Push.Channel] = true
			}
		})
	}
	wg.Wait()
	close(pubErrs)
	close(recvErrs)
	for err := range pubErrs {
		t.Error(err)
	}
	for err := range recvErrs {
		t.Error(err)
	}
	t.Logf("%d publications from node 2 delivered on node 1 in %v", conns*perConn, time.Since(start).Round(time.Millisecond))
}
