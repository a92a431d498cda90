package loadgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/protocol"
)

// A close the server sends is kept with what the reader knew of the
// connection: its receive buffer, which the overload report prints to
// tell a reader that was starved from one whose window stayed shut.
func TestPoolKeepsServerCloses(t *testing.T) {
	noLeaks(t)
	s := startHerald(t)
	pool, err := loadgen.NewPool(loadgen.PoolConfig{
		URLs: []string{wsURL(s)}, Format: protocol.TypeJSON, Secret: secret, UserPrefix: "u", Channels: []string{"c0"},
	}, loadgen.NewClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := pool.Open(ctx, 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := pool.ServerCloses(); len(got) != 0 {
		t.Fatalf("closes before any: %+v", got)
	}
	before := loadgen.NewClock().Now()
	if err := apiCall(ctx, "http://"+s.Addr()+"/api", "disconnect", `{"user":"u0","disconnect":{"code":4321,"reason":"test close"}}`); err != nil {
		t.Fatal(err)
	}
	var closes []loadgen.ServerClose
	for len(closes) == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("no close kept; counters %+v, errors %v", pool.Counters(), pool.Errors())
		case <-time.After(5 * time.Millisecond):
		}
		closes = pool.ServerCloses()
	}
	c := closes[0]
	if len(closes) != 1 || c.Sub != 0 || c.Code != 4321 || c.Reason != "test close" {
		t.Fatalf("closes %+v, want one of subscriber 0 with 4321 \"test close\"", closes)
	}
	if c.RcvBuf <= 0 || c.At < before || c.Unread < 0 || c.Turn < 0 {
		t.Fatalf("close %+v: want its receive buffer, a time after the disconnect and no negative spans", c)
	}
}
