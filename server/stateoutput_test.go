package server

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/stateoutput"
)

// TestChannelStateOutputPostgres: a node with a PostgreSQL output of
// channel state events and no state proxy writes a real client's
// subscribe and unsubscribe as an occupied and a vacated row, in order.
func TestChannelStateOutputPostgres(t *testing.T) {
	// Before the node starts, so that the schema is dropped after the
	// node stops.
	dsn, schema, conn := testenv.PostgresSchema(t, "herald_so_")
	table := schema + ".state_events"

	cfg := config.Default()
	cfg.Channel.State.VacatedEventDelay = 100 * time.Millisecond
	cfg.Channel.State.Outputs = []stateoutput.Config{{Name: "db", Type: stateoutput.TypePostgres,
		Postgres: stateoutput.PostgresConfig{DSN: dsn, Table: table}}}
	cfg.Channel.Namespaces = []config.Namespace{{Namespace: hub.Namespace{Name: "cs", NamespaceOptions: hub.NamespaceOptions{
		AllowSubscribeForClient: true, StateEvents: true,
	}}}}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	rows := func() string {
		var got string
		err := conn.QueryRow(t.Context(), "SELECT coalesce(string_agg(channel || ' ' || type, ', ' ORDER BY id), '') FROM "+table).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	c := mustDial(t, s, "u1")
	c.mustSubscribe(t, "cs:room")
	testenv.Eventually(t, "the occupied row", 10*time.Second, func() bool { return rows() == "cs:room occupied" })
	id, err := c.Send(map[string]any{"unsubscribe": map[string]string{"channel": "cs:room"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AwaitReply(id, time.Now().Add(10*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	const want = "cs:room occupied, cs:room vacated"
	testenv.Eventually(t, "the vacated row", 10*time.Second, func() bool { return rows() == want })
	if got := rows(); got != want {
		t.Fatalf("rows %q, want %q", got, want)
	}
}
