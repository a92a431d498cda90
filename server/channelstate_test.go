//go:build unix

package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/internal/test/testenv"
)

// stateBackend is a state proxy endpoint: it records every event it is
// sent, in the order received, and drops a repeat as docs/proxy.md tells
// a backend to: an event whose time_ms is not past its channel's last.
// A node killed after the backend took a batch and before it recorded
// so leaves the batch to be sent again (at least once per delivery).
type stateBackend struct {
	mu      sync.Mutex
	events  []stateEvent // the events, repeats dropped
	repeats []stateEvent
	last    map[string]stateEvent
}

type stateEvent struct {
	Channel string `json:"channel"`
	Type    string `json:"type"`
	TimeMs  int64  `json:"time_ms"`
}

func (b *stateBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Events []stateEvent `json:"events"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	if b.last == nil {
		b.last = map[string]stateEvent{}
	}
	for _, e := range req.Events {
		if e.TimeMs <= b.last[e.Channel].TimeMs {
			b.repeats = append(b.repeats, e)
			continue
		}
		b.last[e.Channel] = e
		b.events = append(b.events, e)
	}
	b.mu.Unlock()
	_, _ = w.Write([]byte(`{"result":{}}`))
}

// of returns the types of ch's events so far, in order.
func (b *stateBackend) of(ch string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.events {
		if e.Channel == ch {
			out = append(out, e.Type)
		}
	}
	return strings.Join(out, " ")
}

// all describes what the backend has, for a failure message.
func (b *stateBackend) all() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmt.Sprintf("events %v, repeats dropped %v", b.events, b.repeats)
}

// stateNodeConfig is a node on the PostgreSQL engine whose namespace cs
// has channel state events, sent to url and written to the table
// state_output of the schema (stateoutput).
func stateNodeConfig(addr, name, dsn, schema, url string) string {
	return fmt.Sprintf(`address: %q
name: %s
log: {level: info, format: json}
engine:
  type: postgres
  postgres: {dsn: %q, schema: %s}
client:
  token: {hmac_secret_key: secret}
proxies:
  - {name: state, endpoint: %q, timeout: 2s}
channel:
  state_proxy: state
  state:
    vacated_event_delay: 500ms
    node_ttl: 3s
    outputs: [{name: db, type: postgresql, postgresql: {dsn: %q, table: %s.state_output}}]
  namespaces:
    - {name: cs, allow_subscribe_for_client: true, state_proxy_enabled: true}
http_api: {key: k}
websocket: {ip_rate_limit: -1}
shutdown: {drain_window: 50ms, timeout: 10s}
`, addr, name, dsn, schema, url, dsn, schema)
}

// TestChannelStateNodeKilled runs two herald processes on PostgreSQL with
// real WebSocket clients and SIGKILLs one. Its channel that no other node
// has is vacated once its lease (node_ttl) and the delay have run out; a
// channel the other node also has stays occupied until that node's
// client leaves; after a restart the killed node's name occupies again.
// Every change is made exactly once and reaches the backend in order per
// channel; the only repeats are of events made before the kill (the
// killed node may have been delivering them: the backend had them, the
// outbox not yet their removal), each with its first time_ms.
func TestChannelStateNodeKilled(t *testing.T) {
	dsn := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
	bin := heraldBin(t)
	testenv.LockPostgres(t)
	schema := "herald_cs_" + strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			_ = conn.Close(ctx)
		}
	})
	// The output's table is in the engine's schema, which the engine
	// makes only once the node runs: after the node opened its output.
	if conn, err := pgx.Connect(t.Context(), dsn); err != nil {
		t.Fatal(err)
	} else {
		_, err = conn.Exec(t.Context(), "CREATE SCHEMA "+schema)
		_ = conn.Close(context.Background())
		if err != nil {
			t.Fatal(err)
		}
	}
	backend := &stateBackend{}
	srv := httptest.NewServer(backend)
	t.Cleanup(srv.Close)
	start := func(name string) *heraldProc {
		addr := freeAddr(t)
		return runHerald(t, bin, name, addr, stateNodeConfig(addr, name, dsn, schema, srv.URL))
	}
	a, b := start("cs1"), start("cs2")
	// A change takes about a second here (3.5 s for the vacated after the
	// kill); an engine error is retried within a second.
	await := func(what, ch, want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for backend.of(ch) != want {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: %s; node cs2's warnings: %q", what, backend.all(), b.linesAt("WARN"))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	ctx := t.Context()
	onA, err := dialAddr(ctx, a.addr, "u1", 0, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer onA.Close()
	onB, err := dialAddr(ctx, b.addr, "u2", 0, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer onB.Close()
	onA.mustSubscribe(t, "cs:shared")
	onA.mustSubscribe(t, "cs:only_a")
	onB.mustSubscribe(t, "cs:shared")
	await("occupied cs:shared", "cs:shared", "occupied")
	await("occupied cs:only_a", "cs:only_a", "occupied")

	killed := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.done
	await("cs:only_a vacated after the kill", "cs:only_a", "occupied vacated")
	// The lease (3s) was last renewed at most a second before the kill.
	if took := time.Since(killed); took < 2*time.Second {
		t.Errorf("vacated %v after the kill, before the node's lease ran out", took)
	}
	if got := backend.of("cs:shared"); got != "occupied" {
		t.Errorf("cs:shared: %q, want still occupied (node 2 has a subscriber)", got)
	}

	// The killed node comes back (a new process, so a new node id).
	a = start("cs1")
	again, err := dialAddr(ctx, a.addr, "u1", 0, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	again.mustSubscribe(t, "cs:only_a")
	await("cs:only_a occupied again", "cs:only_a", "occupied vacated occupied")

	id, err := onB.Send(map[string]any{"unsubscribe": map[string]string{"channel": "cs:shared"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := onB.AwaitReply(id, time.Now().Add(10*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	await("cs:shared vacated", "cs:shared", "occupied vacated")

	// Nothing is left to deliver, so nothing more will come: each change
	// arrived once.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	testenv.Eventually(t, "the outbox empty", 10*time.Second, func() bool {
		var n int
		err := conn.QueryRow(ctx, "SELECT count(*) FROM "+schema+".channel_state_events").Scan(&n)
		return err == nil && n == 0
	})
	if got := backend.of("cs:only_a") + " | " + backend.of("cs:shared"); got != "occupied vacated occupied | occupied vacated" {
		t.Errorf("events: %s", got)
	}
	backend.mu.Lock()
	defer backend.mu.Unlock()
	// The events made before the kill are each channel's first; any
	// repeat must be one of them, as first sent.
	first := map[string]stateEvent{}
	for _, e := range backend.events {
		if _, ok := first[e.Channel]; !ok {
			first[e.Channel] = e
		}
	}
	for _, e := range backend.repeats {
		if e != first[e.Channel] {
			t.Errorf("repeat %+v: not an event made before the kill (those were %v)", e, first)
		}
	}
	if len(backend.repeats) > 0 {
		t.Logf("the killed node was delivering: repeats %v", backend.repeats)
	}
	// The output got each batch after the backend, once: its rows are
	// the backend's events without repeats, in the same order.
	rows, err := conn.Query(ctx, "SELECT channel, type, time_ms FROM "+schema+".state_output ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := pgx.CollectRows(rows, pgx.RowToStructByPos[stateEvent])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stored, backend.events) {
		t.Errorf("output rows %v, want the backend's events %v", stored, backend.events)
	}
}
