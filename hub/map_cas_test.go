package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
)

// Hub.MapPublishWith and MapRemoveWith as compare-and-swap: the position
// of a key read from MapState (the entry's Offset, the page's epoch)
// makes the next change conditional on nobody having changed the key
// since; a stale one changes nothing and returns the stream's position.
func TestMapExpectedPosition(t *testing.T) {
	t.Parallel()
	n := mapTagsNode(t)
	ctx := context.Background()
	mapSet(t, n.hub, "mm:a", "k", `1`)
	page, err := n.hub.MapState(ctx, "mm:a", "", 0)
	if err != nil || len(page.Entries) != 1 {
		t.Fatalf("state: %+v, %v", page, err)
	}
	read := &engine.StreamPosition{Offset: page.Entries[0].Offset, Epoch: page.Position.Epoch}
	next, err := n.hub.MapPublishWith(ctx, "mm:a", "k", []byte(`2`), hub.MapChange{ExpectedPosition: read})
	if err != nil {
		t.Fatalf("compare-and-swap from the read position: %v", err)
	}
	sp, err := n.hub.MapPublishWith(ctx, "mm:a", "k", []byte(`3`), hub.MapChange{ExpectedPosition: read})
	if !errors.Is(err, engine.ErrMapPositionMismatch) || sp != next {
		t.Fatalf("from a stale position: %+v, %v; want %+v and ErrMapPositionMismatch", sp, err, next)
	}
	if _, err := n.hub.MapRemoveWith(ctx, "mm:a", "k", hub.MapChange{ExpectedPosition: read}); !errors.Is(err, engine.ErrMapPositionMismatch) {
		t.Fatalf("stale removal: %v, want ErrMapPositionMismatch", err)
	}
	if _, err := n.hub.MapRemoveWith(ctx, "mm:a", "k", hub.MapChange{ExpectedPosition: &next}); err != nil {
		t.Fatalf("removal from the current position: %v", err)
	}
	if st, err := n.hub.MapStats(ctx, "mm:a"); err != nil || st.NumKeys != 0 {
		t.Fatalf("keys: %+v, %v", st, err)
	}
}

// An idempotency key makes a server map change at most once within the
// hub's IdempotencyWindow: the repeat returns the first change's position
// and an error that is engine.ErrMapDuplicate.
func TestMapIdempotencyKey(t *testing.T) {
	t.Parallel()
	n := mapTagsNode(t)
	ctx := context.Background()
	first, err := n.hub.MapPublishWith(ctx, "mm:a", "k", []byte(`1`), hub.MapChange{IdempotencyKey: "x"})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := n.hub.MapPublishWith(ctx, "mm:a", "k", []byte(`2`), hub.MapChange{IdempotencyKey: "x"})
	if !errors.Is(err, engine.ErrMapDuplicate) || sp != first || hub.MapSuppressReason(err) != "idempotency" {
		t.Fatalf("repeat: %+v, %v; want %+v and ErrMapDuplicate", sp, err, first)
	}
	var he *hub.Error
	if _, err := n.hub.MapRemoveWith(ctx, "mm:a", "k", hub.MapChange{IdempotencyKey: strings.Repeat("x", hub.MaxIdempotencyKey+1)}); !errors.As(err, &he) || he.Code != 107 {
		t.Fatalf("an idempotency key over MaxIdempotencyKey: %v, want error 107", err)
	}
}
