package sqlauth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is an application schema with a permission table and the
// functions the checks call.
type fixture struct {
	dsn, schema string
	conn        *pgx.Conn
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dsn := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("sqlauth_test_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	f := &fixture{dsn: dsn, schema: schema, conn: conn}
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		_ = conn.Close(context.Background())
	})
	f.exec(t, `CREATE SCHEMA `+schema)
	f.exec(t, `CREATE TABLE `+schema+`.grants (user_id text, channel text, PRIMARY KEY (user_id, channel))`)
	f.exec(t, `CREATE TABLE `+schema+`.calls (n int)`)
	f.exec(t, `INSERT INTO `+schema+`.calls VALUES (0)`)
	f.exec(t, `CREATE FUNCTION `+schema+`.can_subscribe(u text, ch text) RETURNS boolean LANGUAGE sql AS $$
		UPDATE `+schema+`.calls SET n = n + 1;
		SELECT EXISTS (SELECT 1 FROM `+schema+`.grants WHERE user_id = u AND channel = ch) $$`)
	f.exec(t, `CREATE FUNCTION `+schema+`.broken(u text, ch text) RETURNS boolean LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'rule table missing'; END $$`)
	return f
}

func (f *fixture) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := f.conn.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (f *fixture) calls(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.conn.QueryRow(t.Context(), `SELECT n FROM `+f.schema+`.calls`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) authorizer(t *testing.T, ttl time.Duration) *Authorizer {
	t.Helper()
	a, err := New(t.Context(), Config{
		DSN: f.dsn, CacheTTL: ttl, Channel: f.schema + "_auth",
		Namespaces: map[string]Checks{
			"orders": {Subscribe: `select ` + f.schema + `.can_subscribe($1, $2)`, Publish: `select ` + f.schema + `.can_subscribe($1, $2)`},
			"broken": {Subscribe: `select ` + f.schema + `.broken($1, $2)`},
			"shape":  {Subscribe: `select 'yes'::text`},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func code(err error) uint32 {
	var e *hub.Error
	if errors.As(err, &e) {
		return uint32(e.Code)
	}
	if err != nil {
		return 1
	}
	return 0
}

func TestChecks(t *testing.T) {
	f := newFixture(t)
	a := f.authorizer(t, -1)
	f.exec(t, `INSERT INTO `+f.schema+`.grants VALUES ('alice', 'orders:1')`)
	ctx := t.Context()
	q := a.cfg.Namespaces["orders"].Subscribe
	for _, tc := range []struct {
		user, ch string
		want     uint32
	}{{"alice", "orders:1", 0}, {"bob", "orders:1", 103}, {"alice", "orders:2", 103}} {
		if got := code(a.check(ctx, "subscribe", q, tc.user, tc.ch)); got != tc.want {
			t.Errorf("%s on %s: code %d, want %d", tc.user, tc.ch, got, tc.want)
		}
	}
	// A failing function, or one that answers something else than a
	// boolean: error 100, never a way in.
	if got := code(a.check(ctx, "subscribe", a.cfg.Namespaces["broken"].Subscribe, "alice", "broken:x")); got != 100 {
		t.Errorf("function raising an error: code %d, want 100", got)
	}
	if got := code(a.check(ctx, "subscribe", a.cfg.Namespaces["shape"].Subscribe, "alice", "shape:x")); got != 100 {
		t.Errorf("function not answering a boolean: code %d, want 100", got)
	}
}

// TestHandlers: in a chain, the checks decide their namespaces and pass
// the rest on, to the next handlers or the hub's defaults.
func TestHandlers(t *testing.T) {
	f := newFixture(t)
	a := f.authorizer(t, -1)
	var proxied atomic.Int32
	h := hub.Chain(a.Handlers(), hub.Handlers{OnSubscribe: func(context.Context, *hub.Client, hub.SubscribeEvent) (hub.SubscribeReply, error) {
		proxied.Add(1)
		return hub.SubscribeReply{}, nil
	}})
	ctx := t.Context()
	// Namespaces without a check go to the next handler.
	if _, err := h.OnSubscribe(ctx, nil, hub.SubscribeEvent{Channel: "other:x"}); err != nil || proxied.Load() != 1 {
		t.Fatalf("other namespace: %v, next handler called %d times", err, proxied.Load())
	}
	// A subscription token is checked by the hub as usual.
	if _, err := h.OnSubscribe(ctx, nil, hub.SubscribeEvent{Channel: "orders:1", Token: "t"}); proxied.Load() != 2 || err != nil {
		t.Fatalf("with a token: %v", err)
	}
	// Without a next handler, publications outside checked namespaces
	// get the hub's defaults.
	if _, err := h.OnPublish(ctx, nil, hub.PublishEvent{Channel: "other:x"}); !errors.Is(err, hub.ErrUseDefault) {
		t.Fatalf("publish elsewhere: %v, want ErrUseDefault", err)
	}
}

func TestCacheAndInvalidation(t *testing.T) {
	f := newFixture(t)
	a := f.authorizer(t, time.Minute)
	ctx := t.Context()
	q := a.cfg.Namespaces["orders"].Subscribe
	testenv.Eventually(t, "the listener listens", 5*time.Second, func() bool {
		a.cache.mu.Lock()
		defer a.cache.mu.Unlock()
		return a.cache.usable
	})
	if got := code(a.check(ctx, "subscribe", q, "bob", "orders:7")); got != 103 {
		t.Fatalf("bob before the grant: %d", got)
	}
	f.exec(t, `INSERT INTO `+f.schema+`.grants VALUES ('bob', 'orders:7')`)
	before := f.calls(t)
	if got := code(a.check(ctx, "subscribe", q, "bob", "orders:7")); got != 103 || f.calls(t) != before {
		t.Fatalf("cached answer: code %d, %d queries", got, f.calls(t)-before)
	}
	// The application invalidates bob's answers.
	f.exec(t, `SELECT pg_notify($1, 'user:bob')`, f.schema+"_auth")
	testenv.Eventually(t, "bob allowed after the notification", 5*time.Second, func() bool {
		return code(a.check(ctx, "subscribe", q, "bob", "orders:7")) == 0
	})
	// An invalidation of everything.
	f.exec(t, `DELETE FROM `+f.schema+`.grants`)
	f.exec(t, `SELECT pg_notify($1, '*')`, f.schema+"_auth")
	testenv.Eventually(t, "bob refused after the notification", 5*time.Second, func() bool {
		return code(a.check(ctx, "subscribe", q, "bob", "orders:7")) == 103
	})
	if !strings.HasSuffix(a.cfg.Channel, "_auth") {
		t.Fatal(a.cfg.Channel)
	}
}
