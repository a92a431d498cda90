package sqlauth

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestRowCheck: the row check answers per user from the publication's
// data, once per publication and user while cached (publications with an
// offset only), and a failing query fails the answer.
func TestRowCheck(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE FUNCTION `+f.schema+`.can_see(u text, ch text, d jsonb) RETURNS boolean LANGUAGE sql AS $$
		UPDATE `+f.schema+`.calls SET n = n + 1;
		SELECT d->>'owner' = u $$`)
	a, err := New(t.Context(), Config{
		DSN: f.dsn, CacheTTL: time.Minute, Channel: f.schema + "_auth",
		Namespaces: map[string]Checks{
			"rows":   {Row: `select ` + f.schema + `.can_see($1, $2, $3::jsonb)`},
			"broken": {Row: `select ` + f.schema + `.broken($1, $2)`},
			"orders": {Subscribe: `select true`},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	testenv.Eventually(t, "the listener listens", 5*time.Second, func() bool {
		a.cache.mu.Lock()
		defer a.cache.mu.Unlock()
		return a.cache.usable
	})
	if !a.HasRowChecks() || !a.Checks("rows") || a.Checks("orders") || a.Checks("") {
		t.Fatal("Checks does not follow the namespaces' row checks")
	}
	ctx := t.Context()
	pub := &engine.Publication{Offset: 3, Time: 1700000000000, Data: []byte(`{"owner":"alice"}`)}
	for range 2 {
		v, err := a.Visible(ctx, "rows:1", pub, []string{"alice", "bob"})
		if err != nil || !v["alice"] || v["bob"] {
			t.Fatalf("visible %v (%v), want alice only", v, err)
		}
	}
	if n := f.calls(t); n != 2 {
		t.Fatalf("%d queries for one publication asked twice about two users, want 2 (then cached)", n)
	}
	// Another row at the same offset after a stream reset is not taken
	// for the cached one.
	reset := &engine.Publication{Offset: 3, Time: 1700000000001, Data: []byte(`{"owner":"bob"}`)}
	if v, err := a.Visible(ctx, "rows:1", reset, []string{"alice", "bob"}); err != nil || v["alice"] || !v["bob"] {
		t.Fatalf("after a reset: %v (%v), want bob only", v, err)
	}
	// Without an offset nothing identifies the row: asked every time.
	live := &engine.Publication{Data: []byte(`{"owner":"bob"}`)}
	for range 2 {
		if v, err := a.Visible(ctx, "rows:1", live, []string{"bob"}); err != nil || !v["bob"] {
			t.Fatalf("no offset: %v (%v)", v, err)
		}
	}
	if n := f.calls(t); n != 6 {
		t.Fatalf("%d queries, want 6", n)
	}
	if _, err := a.Visible(ctx, "broken:1", pub, []string{"alice"}); err == nil {
		t.Fatal("a failing row check answered")
	}
	if _, err := a.Visible(ctx, "orders:1", pub, []string{"alice"}); err == nil {
		t.Fatal("a namespace without a row check answered")
	}
}
