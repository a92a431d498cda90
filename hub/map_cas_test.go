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
// of a key read with MapEntry (the entry's Offset, the stream's epoch)
// makes the next change conditional on nobody having changed the key
// since; a stale one changes nothing and returns the stream's position.
func TestMapExpectedPosition(t *testing.T) {
	t.Parallel()
	n := mapTagsNode(t)
	ctx := context.Background()
	mapSet(t, n.hub, "mm:a", "j", `0`)
	mapSet(t, n.hub, "mm:a", "k", `1`)
	mapSet(t, n.hub, "mm:a", "l", `0`)
	entry, at, err := n.hub.MapEntry(ctx, "mm:a", "k")
	if err != nil || entry == nil || string(entry.Data) != `1` || entry.Offset != 2 || at.Offset != 3 {
		t.Fatalf("MapEntry: %+v at %+v, %v; want k=1 set at offset 2, the top 3", entry, at, err)
	}
	read := &engine.StreamPosition{Offset: entry.Offset, Epoch: at.Epoch}
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
	if entry, _, err := n.hub.MapEntry(ctx, "mm:a", "k"); err != nil || entry != nil {
		t.Fatalf("MapEntry of a removed key: %+v, %v", entry, err)
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
