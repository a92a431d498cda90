package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestSQLAuthorization: a namespace's subscribe_check and publish_check
// decide through the application's own SQL functions, with a real client.
func TestSQLAuthorization(t *testing.T) {
	dsn := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	app := fmt.Sprintf("app_sqlauth_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(t.Context(), sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+app+" CASCADE")
		_ = conn.Close(context.Background())
	})
	exec(`CREATE SCHEMA ` + app)
	exec(`CREATE TABLE ` + app + `.members (user_id text, room text)`)
	exec(`INSERT INTO ` + app + `.members VALUES ('alice', 'rooms:1')`)
	exec(`CREATE FUNCTION ` + app + `.can_join(u text, ch text) RETURNS boolean LANGUAGE sql AS $$
		SELECT EXISTS (SELECT 1 FROM ` + app + `.members WHERE user_id = u AND room = ch) $$`)
	exec(`CREATE FUNCTION ` + app + `.can_post(u text, ch text) RETURNS boolean LANGUAGE sql AS $$ SELECT u = 'alice' $$`)
	exec(`CREATE FUNCTION ` + app + `.broken(u text, ch text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'oops'; END $$`)

	cfg := config.Default()
	networkedEngines()["postgres"](t, &cfg)
	cfg.SQLAuth.Channel = app + "_auth"
	cfg.Channel.Namespaces = []config.Namespace{
		{Namespace: hub.Namespace{Name: "rooms"}, NamespaceSQLChecks: config.NamespaceSQLChecks{
			SubscribeCheck: "select " + app + ".can_join($1, $2)", PublishCheck: "select " + app + ".can_post($1, $2)",
		}},
		{Namespace: hub.Namespace{Name: "broken"}, NamespaceSQLChecks: config.NamespaceSQLChecks{SubscribeCheck: "select " + app + ".broken($1, $2)"}},
	}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	// call returns the reply to cmd as compact JSON (keys sorted).
	call := func(c *jsonclient.Client, cmd string) string {
		t.Helper()
		return jsonclient.Compact(t, c.Call(cmd))
	}
	alice, bob := connectClient(t, s, "alice"), connectClient(t, s, "bob")
	if got := call(alice, `{"id":2,"subscribe":{"channel":"rooms:1"}}`); !strings.Contains(got, `"subscribe"`) {
		t.Fatalf("alice, a member: %s", got)
	}
	if got := call(bob, `{"id":2,"subscribe":{"channel":"rooms:1"}}`); !strings.Contains(got, `"code":103`) {
		t.Fatalf("bob, not a member: %s", got)
	}
	if got := call(alice, `{"id":3,"publish":{"channel":"rooms:1","data":{"t":"hi"}}}`); !strings.Contains(got, `"publish"`) {
		t.Fatalf("alice publishes: %s", got)
	}
	if got := call(bob, `{"id":3,"publish":{"channel":"rooms:1","data":{"t":"hi"}}}`); !strings.Contains(got, `"code":103`) {
		t.Fatalf("bob publishes: %s", got)
	}
	if got := call(bob, `{"id":4,"subscribe":{"channel":"broken:1"}}`); !strings.Contains(got, `"code":100`) {
		t.Fatalf("a failing function: %s", got)
	}
	// bob joins: the application tells Herald, and his next try works.
	exec(`INSERT INTO ` + app + `.members VALUES ('bob', 'rooms:1')`)
	exec(`SELECT pg_notify($1, 'user:bob')`, app+"_auth")
	id := 5
	testenv.Eventually(t, "bob allowed once invalidated", 5*time.Second, func() bool {
		id++
		return strings.Contains(call(bob, fmt.Sprintf(`{"id":%d,"subscribe":{"channel":"rooms:1"}}`, id)), `"subscribe"`)
	})
	// Still connected: the failing function did not cost the connection.
	if got := call(bob, `{"id":99,"presence_stats":{"channel":"rooms:1"}}`); !strings.Contains(got, `"id":99`) {
		t.Fatalf("after the failures: %s", got)
	}
}
