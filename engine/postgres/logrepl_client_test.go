package postgres

import (
	"log/slog"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/jsonclient"
	"github.com/heraldhq/herald/protocol"
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
		jc := jsonclient.New(t, jsonclient.Mem(c), secret)
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
