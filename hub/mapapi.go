package hub

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// The server side of map channels, for the server API: read the state
// and the change stream, count and clear. MapPublish and MapRemove are in
// command_mappublish.go.

// mapChannelRule resolves ch for a server call on a map channel, with the
// engine's map part: error 107 for a channel whose namespace is not a map
// one.
func (h *Hub) mapChannelRule(ch string) (*rule, engine.MapBroker, error) {
	r, err := h.resolveForServer(ch)
	if err != nil {
		return nil, nil, err
	}
	if !r.isMap() {
		return nil, nil, &Error{Code: protocol.ErrorBadRequest, Message: fmt.Sprintf("channel %q is not in a map namespace", ch)}
	}
	mb, e := h.mapBroker()
	if e != nil {
		return nil, nil, e
	}
	return r, mb, nil
}

// MapState reads a page of the map channel ch: at most limit keys after
// cursor ("" for the first page), in key order, with the cursor of the
// next page ("" after the last) and the stream position of the read. A
// limit of 0 is the namespace's default page size; one above its maximum
// is error 107.
func (h *Hub) MapState(ctx context.Context, ch, cursor string, limit int) (engine.MapStatePage, error) {
	r, mb, err := h.mapChannelRule(ch)
	if err != nil {
		return engine.MapStatePage{}, err
	}
	if limit > int(^uint32(0)>>1) || len(cursor) > MaxMapKeyLength {
		return engine.MapStatePage{}, newError(protocol.ErrorBadRequest)
	}
	n, e := r.Map.pageLimit(int32(limit))
	if e != nil {
		return engine.MapStatePage{}, e
	}
	page, err := mb.MapState(ctx, ch, engine.MapStateRequest{Cursor: cursor, Limit: n, MetaTTL: r.Map.MetaTTL})
	if err != nil {
		return engine.MapStatePage{}, fmt.Errorf("map state of %q: %w", ch, err)
	}
	return page, nil
}

// MapEntry reads the key of the map channel ch alone: its entry (nil
// when the key is not in the state) and the stream's position. A
// compare-and-swap takes its MapChange.ExpectedPosition from them: the
// entry's Offset and the position's Epoch.
func (h *Hub) MapEntry(ctx context.Context, ch, key string) (*engine.Publication, engine.StreamPosition, error) {
	r, mb, err := h.mapChannelRule(ch)
	if err != nil {
		return nil, engine.StreamPosition{}, err
	}
	if e := checkMapKey(key); e != nil {
		return nil, engine.StreamPosition{}, e
	}
	page, err := mb.MapState(ctx, ch, engine.MapStateRequest{Key: key, Limit: 1, MetaTTL: r.Map.MetaTTL})
	if err != nil {
		return nil, engine.StreamPosition{}, fmt.Errorf("map entry %q of %q: %w", key, ch, err)
	}
	if len(page.Entries) == 0 {
		return nil, page.Position, nil
	}
	return page.Entries[0], page.Position, nil
}

// MapStream reads the change stream of the map channel ch as History
// reads a stream.
func (h *Hub) MapStream(ctx context.Context, ch string, since *engine.StreamPosition, limit int, reverse bool) ([]*engine.Publication, engine.StreamPosition, error) {
	r, _, err := h.mapChannelRule(ch)
	if err != nil {
		return nil, engine.StreamPosition{}, err
	}
	maxLimit := orDefault(r.Map.MaxPageSize, defaultMapMaxPageSize)
	mr := *r
	mr.HistoryMetaTTL = r.Map.MetaTTL
	return h.history(ctx, ch, &mr, since, limit, reverse, maxLimit)
}

// MapStats counts the keys of the map channel ch.
func (h *Hub) MapStats(ctx context.Context, ch string) (engine.MapStats, error) {
	_, mb, err := h.mapChannelRule(ch)
	if err != nil {
		return engine.MapStats{}, err
	}
	st, err := mb.MapStats(ctx, ch)
	if err != nil {
		return st, fmt.Errorf("map stats of %q: %w", ch, err)
	}
	return st, nil
}

// MapClear drops the state and the stream of the map channel ch. The
// stream starts again in a new epoch: the next change reaches current
// subscribers in that epoch, which unsubscribes them with 2500
// (insufficient state), and they subscribe again and read the state.
func (h *Hub) MapClear(ctx context.Context, ch string) error {
	_, mb, err := h.mapChannelRule(ch)
	if err != nil {
		return err
	}
	if err := mb.MapClear(ctx, ch); err != nil {
		return fmt.Errorf("map clear of %q: %w", ch, err)
	}
	return nil
}
