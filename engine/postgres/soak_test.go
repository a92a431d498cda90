package postgres

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// TestSoakTableGrowth publishes to history channels for a while and
// samples the history table's size, to show that retention keeps it
// bounded under sustained load. It is long, so it runs only when
// HERALD_TEST_SOAK is set to a duration (for example 3m).
func TestSoakTableGrowth(t *testing.T) {
	dur, err := time.ParseDuration(os.Getenv("HERALD_TEST_SOAK"))
	if err != nil || dur <= 0 {
		t.Skip("set HERALD_TEST_SOAK to a duration to run the soak test")
	}
	const channels, size, publishers = 1000, 100, 128
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	var delivered atomic.Int64
	h := &countHandler{n: &delivered}
	a := startEngine(t, testOptions(dsn, schema), h)
	b := startEngine(t, testOptions(dsn, schema), h)
	names := make([]string, channels)
	for i := range names {
		names[i] = fmt.Sprintf("soak:%d", i)
		if err := b.Subscribe(t.Context(), names[i]); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), dur)
	defer cancel()
	var published atomic.Int64
	var wg sync.WaitGroup
	opts := engine.PublishOptions{HistorySize: size, HistoryTTL: time.Hour}
	for p := range publishers {
		wg.Go(func() {
			data := []byte(`{"text":"a publication of about a hundred bytes, as a chat message would be","n":1}`)
			for i := p; ctx.Err() == nil; i += publishers {
				e := a
				if i%2 == 1 {
					e = b
				}
				if _, err := e.Publish(ctx, names[i%channels], &engine.Publication{Data: data}, opts); err != nil {
					if ctx.Err() == nil {
						t.Errorf("publish: %v", err)
					}
					return
				}
				published.Add(1)
			}
		})
	}
	conn := sqlConn(t, dsn)
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	start, last := time.Now(), int64(0)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			var rows, dead int64
			var bytes int64
			err := conn.QueryRow(context.Background(), `SELECT coalesce(n_live_tup, 0), coalesce(n_dead_tup, 0), pg_total_relation_size(relid)
				FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'history'`, schema).Scan(&rows, &dead, &bytes)
			if err != nil {
				t.Fatal(err)
			}
			n := published.Load()
			t.Logf("%4.0fs: %7d published (%5.0f/s), history %7d live + %7d dead rows, %6.1f MiB",
				time.Since(start).Seconds(), n, float64(n-last)/10, rows, dead, float64(bytes)/(1<<20))
			last = n
		}
	}
	wg.Wait()
}

// countHandler counts publications.
type countHandler struct{ n *atomic.Int64 }

func (h *countHandler) HandlePublication(string, *engine.Publication, engine.StreamPosition) {
	h.n.Add(1)
}
func (h *countHandler) HandleJoin(string, *engine.ClientInfo)  {}
func (h *countHandler) HandleLeave(string, *engine.ClientInfo) {}
func (h *countHandler) HandleControl([]byte)                   {}
