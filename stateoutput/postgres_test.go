package stateoutput_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/stateoutput"
)

// batch is a batch of events of two channels, each channel's in the
// order they were made.
var batch = []stateoutput.Event{
	{Channel: "chat:a", Type: "occupied", TimeMs: 1000},
	{Channel: "chat:b", Type: "occupied", TimeMs: 1001},
	{Channel: "chat:a", Type: "vacated", TimeMs: 1500},
	{Channel: "chat:a", Type: "occupied", TimeMs: 1501},
	{Channel: "chat:b", Type: "vacated", TimeMs: 900}, // another node's clock: order is the batch's
}

// pgTable returns a table name in a schema of the test's own, and a
// connection.
func pgTable(t *testing.T) (dsn string, conn *pgx.Conn, table string) {
	t.Helper()
	dsn, schema, conn := testenv.PostgresSchema(t, "herald_so_")
	return dsn, conn, schema + ".events"
}

// pgRows reads the table's rows in id order.
func pgRows(t *testing.T, conn *pgx.Conn, table string) []stateoutput.Event {
	t.Helper()
	rows, err := conn.Query(t.Context(), "SELECT channel, type, time_ms FROM "+table+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[stateoutput.Event])
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestPostgresOutput: the table is created, a batch is stored in order,
// and the same batch written again (a redelivery) and a batch that
// overlaps it add only the new events.
func TestPostgresOutput(t *testing.T) {
	dsn, conn, table := pgTable(t)
	out, err := stateoutput.NewPostgresOutput(t.Context(), stateoutput.PostgresConfig{DSN: dsn, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := out.Write(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	if got := pgRows(t, conn, table); !slices.Equal(got, batch) {
		t.Fatalf("rows %v, want %v", got, batch)
	}
	next := stateoutput.Event{Channel: "chat:a", Type: "vacated", TimeMs: 2000}
	for _, b := range [][]stateoutput.Event{batch, append(batch[3:], next)} {
		if err := out.Write(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := pgRows(t, conn, table), append(slices.Clone(batch), next); !slices.Equal(got, want) {
		t.Fatalf("after the redelivery: rows %v, want %v", got, want)
	}
	// A second node opening the same table finds it as it is.
	again, err := stateoutput.NewPostgresOutput(t.Context(), stateoutput.PostgresConfig{DSN: dsn, Table: table})
	if err != nil {
		t.Fatalf("open an existing table: %v", err)
	}
	again.Close()
}

// TestPostgresOutputTableChecked: an existing table without a column the
// output writes, or without the unique constraint, is refused at open,
// naming what is missing.
func TestPostgresOutputTableChecked(t *testing.T) {
	dsn, conn, table := pgTable(t)
	for _, c := range []struct{ ddl, want string }{
		{"(id bigserial, channel text, kind text, time_ms bigint, UNIQUE (channel, time_ms, kind))", `no column "type"`},
		{"(id bigserial, channel text, type text, time_ms integer, UNIQUE (channel, time_ms, type))", `column "time_ms" is integer, want bigint`},
		{"(id bigserial, channel text, type text, time_ms bigint, UNIQUE (channel, time_ms))", "no UNIQUE (channel, time_ms, type)"},
	} {
		if _, err := conn.Exec(t.Context(), "DROP TABLE IF EXISTS "+table+"; CREATE TABLE "+table+" "+c.ddl); err != nil {
			t.Fatal(err)
		}
		out, err := stateoutput.NewPostgresOutput(t.Context(), stateoutput.PostgresConfig{DSN: dsn, Table: table})
		if err == nil {
			out.Close()
			t.Fatalf("%s: opened", c.ddl)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.ddl, err, c.want)
		}
	}
}

// TestPostgresTableDocumented: docs/proxy.md shows the table as the
// output creates it.
func TestPostgresTableDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "CREATE TABLE herald_channel_state_events " + stateoutput.PostgresTableBody
	if !strings.Contains(string(doc), want) {
		t.Fatalf("docs/proxy.md does not show the table; want:\n%s", want)
	}
}
