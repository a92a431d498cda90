package postgres

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldhq/herald/engine"
)

// TestAddPresenceJoinNotText: a client PostgreSQL cannot store as text
// fails AddPresenceJoin alone, the same way AddPresence fails it, while
// publications submitted beside it go through: its presence row never
// joins their transaction.
func TestAddPresenceJoinNotText(t *testing.T) {
	dsn := testDSN(t)
	rec := newRecorder()
	e := startEngine(t, testOptions(dsn, testSchema(t, dsn)), rec)
	ctx := t.Context()
	if err := e.Subscribe(ctx, "pj:a"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = e.Publish(ctx, "pj:a", &engine.Publication{Data: []byte(`{}`)}, engine.PublishOptions{})
		})
	}
	err := e.AddPresenceJoin(ctx, "pj:a", &engine.ClientInfo{User: "u", Client: "c\xff"}, time.Minute)
	wg.Wait()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22021" {
		t.Fatalf("AddPresenceJoin of a client id that is not UTF-8: %v, want PostgreSQL's 22021", err)
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("publications beside it: %v", err)
	}
	rec.awaitN(t, "pj:a", len(errs))
}
