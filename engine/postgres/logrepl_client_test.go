package postgres

import (
	"log/slog"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/sqlauth"
)

// TestLogicalStreamTagsFilterClient: a table streamed in logical mode with
// its status column as tags, written by plain SQL, reaches a JSON protocol
// client through a hub; the client that subscribed with the tags filter
// status eq 'shipped' gets only the shipped rows, the other client every
// change.
func TestLogicalStreamTagsFilterClient(t *testing.T) {
	dsn := logicalCluster(t)
	conn := sqlConn(t, dsn)
	e := newEngine(t, logicalOptions(dsn, "herald", "node-a"))
	const secret = "logical-tags-secret"
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.Start(t, hub.Config{
		Engine: e, Tokens: v, Logger: slog.New(slog.DiscardHandler),
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, AllowTagsFilter: true, HistorySize: 100, HistoryTTL: time.Minute, ForceRecovery: true,
		}},
	})
	dial := func(user string) *jsonclient.Client {
		c, _ := hubtest.Dial(h, protocol.TypeJSON)
		t.Cleanup(c.Drop)
		jc := jsonclient.New(t, wire.Mem(c), secret)
		jc.Connect(user)
		return jc
	}
	sqlExec(t, conn, `CREATE TABLE parcels (id int PRIMARY KEY, status text)`)
	sqlExec(t, conn, `SELECT herald.stream_table('parcels', 'parcels', history_size => 100, history_ttl => '1 minute',
		tags => ARRAY['status'], mode => 'logical')`)
	awaitSlotActive(t, conn, "herald_streams")
	filtered, all := dial("f"), dial("a")
	filtered.MustSubscribe(2, "parcels", `"tf":{"key":"status","cmp":"eq","val":"shipped"}`)
	all.MustSubscribe(2, "parcels", "")

	sqlExec(t, conn, `INSERT INTO parcels VALUES (1, 'new'), (2, 'shipped'), (3, 'new')`)
	sqlExec(t, conn, `UPDATE parcels SET status = 'shipped' WHERE id = 3`)
	read := func(c *jsonclient.Client, n int) []string {
		t.Helper()
		var got []string
		for len(got) < n {
			m := c.Next()
			if pub, ok := jsonclient.Path(m, "push", "pub").(map[string]any); ok {
				got = append(got, jsonclient.Compact(t, []any{
					jsonclient.Path(pub, "data", "op"), jsonclient.Path(pub, "data", "new", "id"), jsonclient.Path(pub, "tags", "status"),
				}))
			}
		}
		return got
	}
	if got := read(all, 4); got[0] != `["insert",1,"new"]` || got[1] != `["insert",2,"shipped"]` ||
		got[2] != `["insert",3,"new"]` || got[3] != `["update",3,"shipped"]` {
		t.Fatalf("unfiltered client got %v", got)
	}
	// The filtered client's next publication after the shipped ones is a
	// marker it passes, so anything else would have come before it.
	sqlExec(t, conn, `INSERT INTO parcels VALUES (4, 'shipped')`)
	if got := read(filtered, 3); got[0] != `["insert",2,"shipped"]` || got[1] != `["update",3,"shipped"]` || got[2] != `["insert",4,"shipped"]` {
		t.Fatalf("client filtering status eq 'shipped' got %v", got)
	}
}

// TestLogicalStreamRowCheck: a namespace's SQL row check (sqlauth) on a
// logically streamed table lets two users on one channel see different
// rows, live and in history.
func TestLogicalStreamRowCheck(t *testing.T) {
	dsn := logicalCluster(t)
	conn := sqlConn(t, dsn)
	sqlExec(t, conn, `CREATE TABLE orders (id int PRIMARY KEY, owner text NOT NULL, item text)`)
	sqlExec(t, conn, `CREATE FUNCTION can_see(u text, ch text, d jsonb) RETURNS boolean LANGUAGE sql STABLE AS $$
		SELECT coalesce(d->'new'->>'owner', d->'old'->>'owner') = u $$`)
	e := newEngine(t, logicalOptions(dsn, "herald", "node-a"))
	a, err := sqlauth.New(t.Context(), sqlauth.Config{DSN: dsn, Namespaces: map[string]sqlauth.Checks{
		"": {Row: `select can_see($1, $2, $3::jsonb)`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	const secret = "logical-rowcheck-secret"
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.Start(t, hub.Config{
		Engine: e, Tokens: v, Logger: slog.New(slog.DiscardHandler), RowCheck: a,
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, AllowHistoryForSubscriber: true, HistorySize: 100, HistoryTTL: time.Minute, ForceRecovery: true,
		}},
	})
	dial := func(user string) *jsonclient.Client {
		c, _ := hubtest.Dial(h, protocol.TypeJSON)
		t.Cleanup(c.Drop)
		jc := jsonclient.New(t, wire.Mem(c), secret)
		jc.Connect(user)
		jc.MustSubscribe(2, "orders", "")
		return jc
	}
	sqlExec(t, conn, `SELECT herald.stream_table('orders', 'orders', history_size => 100, history_ttl => '1 minute', mode => 'logical')`)
	awaitSlotActive(t, conn, "herald_streams")
	alice, bob := dial("alice"), dial("bob")
	sqlExec(t, conn, `INSERT INTO orders VALUES (1, 'alice', 'tea'), (2, 'bob', 'coffee'), (3, 'alice', 'cake')`)
	sqlExec(t, conn, `DELETE FROM orders WHERE id = 2`)
	read := func(c *jsonclient.Client, n int) string {
		t.Helper()
		var got []any
		for len(got) < n {
			if pub, ok := jsonclient.Path(c.Next(), "push", "pub").(map[string]any); ok {
				row := jsonclient.Path(pub, "data", "new")
				if row == nil {
					row = jsonclient.Path(pub, "data", "old")
				}
				got = append(got, []any{jsonclient.Path(pub, "data", "op"), jsonclient.Path(row.(map[string]any), "id")})
			}
		}
		return jsonclient.Compact(t, got)
	}
	if got := read(alice, 2); got != `[["insert",1],["insert",3]]` {
		t.Fatalf("alice got %s", got)
	}
	if got := read(bob, 2); got != `[["insert",2],["delete",2]]` {
		t.Fatalf("bob got %s", got)
	}
	// Alice's next row comes next: she was sent nothing of bob's.
	sqlExec(t, conn, `INSERT INTO orders VALUES (4, 'alice', 'jam')`)
	if got := read(alice, 1); got != `[["insert",4]]` {
		t.Fatalf("alice then got %s", got)
	}
	hist := bob.Call(`{"id":9,"history":{"channel":"orders","limit":-1}}`)
	if pubs, _ := jsonclient.Path(hist, "history", "publications").([]any); len(pubs) != 2 {
		t.Fatalf("bob's history: %v, want his 2 changes of 5", hist)
	}
}
