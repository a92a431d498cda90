package memory

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// TestIdempotencyKeysBoundedByWindow: keys are kept for their whole
// window; when IdempotencyKeys are held, a new key is refused with
// ErrIdempotencyFull (a retry of a held key still answers), and the room
// comes back as windows end, whether a publication or the janitor finds
// them.
func TestIdempotencyKeysBoundedByWindow(t *testing.T) {
	e, clock := started(t, Config{IdempotencyKeys: 3})
	ctx := context.Background()
	opts := engine.PublishOptions{HistorySize: 100, HistoryTTL: time.Hour, IdempotentResultTTL: time.Minute}
	pub := func(ch, key string) (engine.StreamPosition, error) {
		o := opts
		o.IdempotencyKey = key
		return e.Publish(ctx, ch, &engine.Publication{Data: []byte(`1`)}, o)
	}
	var first engine.StreamPosition
	for i := range 3 {
		// Three channels, likely on three shards: the bound is the
		// engine's.
		sp, err := pub(fmt.Sprint("ch", i), "k")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = sp
		}
	}
	if _, err := pub("ch0", "new"); !errors.Is(err, engine.ErrIdempotencyFull) {
		t.Fatalf("a fourth key: %v, want ErrIdempotencyFull", err)
	}
	if sp, err := pub("ch0", "k"); err != nil || sp != first {
		t.Fatalf("retry of a held key: %+v %v, want %+v", sp, err, first)
	}
	// Within the window nothing is freed.
	clock.Advance(59 * time.Second)
	e.sweep()
	if _, err := pub("ch0", "new"); !errors.Is(err, engine.ErrIdempotencyFull) {
		t.Fatalf("a fourth key before any window ended: %v, want ErrIdempotencyFull", err)
	}
	// The windows end: a publication on ch0's shard frees its key, the
	// janitor the others'.
	clock.Advance(2 * time.Second)
	if _, err := pub("ch0", "new"); err != nil {
		t.Fatalf("a key after ch0's window ended: %v", err)
	}
	e.sweep()
	for i := range 2 {
		if _, err := pub(fmt.Sprint("ch", i+1), "new"); err != nil {
			t.Fatalf("a new key after the sweep: %v", err)
		}
	}
	if got := e.idemHeld.Load(); got != 3 {
		t.Fatalf("%d keys counted, want 3", got)
	}
	// Every window ends: the janitor frees all, and a key whose window
	// ended publishes again.
	clock.Advance(2 * time.Minute)
	e.sweep()
	if got := e.idemHeld.Load(); got != 0 {
		t.Fatalf("%d keys counted after every window ended, want 0", got)
	}
	if sp, err := pub("ch0", "k"); err != nil || sp == first {
		t.Fatalf("expired key: %+v %v, want a new publication", sp, err)
	}
}
