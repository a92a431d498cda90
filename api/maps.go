package api

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// The map methods, named as in Centrifugo's server API: map_publish,
// map_remove, map_read_state, map_read_stream, map_stats and map_clear.

type mapPublishRequest struct {
	Channel string          `json:"channel"`
	Key     string          `json:"key"`
	Data    json.RawMessage `json:"data"`
	B64Data string          `json:"b64data"`
	// What the change carries besides; score and stream_data, which
	// Centrifugo ignores, are refused with 107 when set.
	KeyMode        string            `json:"key_mode"`
	IdempotencyKey string            `json:"idempotency_key"`
	Tags           map[string]string `json:"tags"`
	Version        uint64            `json:"version"`
	VersionEpoch   string            `json:"version_epoch"`
	Score          int64             `json:"score"`
	Delta          bool              `json:"delta"`
	StreamData     json.RawMessage   `json:"stream_data"`
	B64StreamData  string            `json:"b64stream_data"`
}

type mapRemoveRequest struct {
	Channel        string            `json:"channel"`
	Key            string            `json:"key"`
	IdempotencyKey string            `json:"idempotency_key"`
	Tags           map[string]string `json:"tags"`
}

type mapReadStateRequest struct {
	Channel        string `json:"channel"`
	Cursor         string `json:"cursor"`
	Limit          int64  `json:"limit"`
	Key            string `json:"key"`
	Asc            bool   `json:"asc"`
	RevisionOffset uint64 `json:"revision_offset"`
	RevisionEpoch  string `json:"revision_epoch"`
}

// mapReadStreamRequest takes the position as Centrifugo's api.proto
// names it (since_offset, since_epoch) or, as Herald's history does, as
// since {offset, epoch}.
type mapReadStreamRequest struct {
	Channel     string          `json:"channel"`
	SinceOffset uint64          `json:"since_offset"`
	SinceEpoch  string          `json:"since_epoch"`
	Since       *streamPosition `json:"since"`
	Limit       int64           `json:"limit"`
	Reverse     bool            `json:"reverse"`
}

// mapEntry is Centrifugo's MapEntry, with the publishing client's
// info besides.
type mapEntry struct {
	Key     string            `json:"key"`
	Data    rawJSON           `json:"data,omitempty"`
	Removed bool              `json:"removed,omitempty"`
	Info    *clientInfo       `json:"info,omitempty"`
	Offset  uint64            `json:"offset,omitempty"`
	Tags    map[string]string `json:"tags,omitempty"`
	Score   int64             `json:"score,omitempty"`
	Time    int64             `json:"time,omitempty"`
}

// mapChangeResult is the result of map_publish and map_remove:
// Centrifugo's MapPublishResult and MapRemoveResult, whose suppressed
// and suppress_reason say that a condition of the request left the map
// unchanged.
type mapChangeResult struct {
	Offset         uint64 `json:"offset,omitempty"`
	Epoch          string `json:"epoch,omitempty"`
	Suppressed     bool   `json:"suppressed,omitempty"`
	SuppressReason string `json:"suppress_reason,omitempty"`
}

type mapReadStateResult struct {
	Entries []mapEntry `json:"entries"`
	Offset  uint64     `json:"offset"`
	Epoch   string     `json:"epoch"`
	Cursor  string     `json:"cursor,omitempty"`
}

type mapReadStreamResult struct {
	Entries []mapEntry `json:"entries"`
	Offset  uint64     `json:"offset"`
	Epoch   string     `json:"epoch"`
}

type mapStatsResult struct {
	NumKeys int `json:"num_keys"`
}

func toMapEntry(p *engine.Publication) mapEntry {
	mp := mapEntry{Key: p.Key, Data: p.Data, Removed: p.Removed, Offset: p.Offset, Tags: p.Tags, Time: p.Time}
	if p.Info != nil {
		ci := toClientInfo(p.Info)
		mp.Info = &ci
	}
	return mp
}

// unsupported names the first option set that Herald does not implement.
func unsupported(opts map[string]bool) *Error {
	for _, name := range []string{"key_mode", "idempotency_key", "tags", "version", "version_epoch", "score", "delta", "stream_data", "b64stream_data", "key", "asc", "revision"} {
		if opts[name] {
			return badRequest("%s: not supported by Herald's map channels", name)
		}
	}
	return nil
}

func (a *handler) mapPublish(ctx context.Context, req *mapPublishRequest) (*mapChangeResult, *Error) {
	if req.Channel == "" {
		return nil, badRequest("channel required")
	}
	if req.Key == "" {
		return nil, badRequest("key required")
	}
	if e := unsupported(map[string]bool{
		// score and stream_data are declared by Centrifugo 6.9.1's api.proto
		// and read by nothing in it (centrifuge v0.40.1 keeps score and
		// ordered maps unexported); Herald says so rather than drop them.
		"score":       req.Score != 0,
		"stream_data": len(req.StreamData) > 0, "b64stream_data": req.B64StreamData != "",
	}); e != nil {
		return nil, e
	}
	data, e := payload(req.Data, req.B64Data)
	if e != nil {
		return nil, e
	}
	sp, err := a.hub.MapPublishWith(ctx, req.Channel, req.Key, data, hub.MapChange{
		Tags: req.Tags, KeyMode: engine.MapKeyMode(req.KeyMode), Version: req.Version, VersionEpoch: req.VersionEpoch,
		IdempotencyKey: req.IdempotencyKey, Delta: req.Delta,
	})
	return a.mapChangeResult(ctx, "map_publish", req.Channel, sp, err)
}

// mapChangeResult answers a map change: a change its conditions left
// undone is a result with suppressed and suppress_reason, with the
// position Centrifugo gives (the first change's for idempotency, the
// stream's for a position mismatch and a removal of a missing key, none
// for the others).
func (a *handler) mapChangeResult(ctx context.Context, method, ch string, sp engine.StreamPosition, err error) (*mapChangeResult, *Error) {
	if reason := hub.MapSuppressReason(err); reason != "" {
		return &mapChangeResult{Offset: sp.Offset, Epoch: sp.Epoch, Suppressed: true, SuppressReason: reason}, nil
	}
	if err != nil {
		return nil, a.fromMapHub(ctx, method, ch, err)
	}
	return &mapChangeResult{Offset: sp.Offset, Epoch: sp.Epoch}, nil
}

func (a *handler) mapRemove(ctx context.Context, req *mapRemoveRequest) (*mapChangeResult, *Error) {
	if req.Channel == "" {
		return nil, badRequest("channel required")
	}
	if req.Key == "" {
		return nil, badRequest("key required")
	}
	sp, err := a.hub.MapRemoveWith(ctx, req.Channel, req.Key, hub.MapChange{Tags: req.Tags, IdempotencyKey: req.IdempotencyKey})
	return a.mapChangeResult(ctx, "map_remove", req.Channel, sp, err)
}

func (a *handler) mapReadState(ctx context.Context, req *mapReadStateRequest) (*mapReadStateResult, *Error) {
	// asc orders ordered maps, which Herald, like Centrifugo 6.9.1, does
	// not have; Herald says so rather than ignore it.
	if e := unsupported(map[string]bool{"asc": req.Asc}); e != nil {
		return nil, e
	}
	if req.Limit < 0 {
		return nil, badRequest("limit: want 0 (the namespace's default page size) or a positive number, got %d", req.Limit)
	}
	var page engine.MapStatePage
	var err error
	if req.Key != "" {
		// One key, as Centrifugo's ReadState with Key: cursor and limit
		// are ignored.
		var p *engine.Publication
		p, page.Position, err = a.hub.MapEntry(ctx, req.Channel, req.Key)
		if p != nil {
			page.Entries = []*engine.Publication{p}
		}
	} else {
		page, err = a.hub.MapState(ctx, req.Channel, req.Cursor, int(min(req.Limit, 1<<31-1)))
	}
	if err != nil {
		return nil, a.fromMapHub(ctx, "map_read_state", req.Channel, err)
	}
	// revision is the position of an earlier page: the state was read
	// again from scratch if the epoch changed since (Centrifugo answers
	// the same 112).
	if (req.RevisionOffset != 0 || req.RevisionEpoch != "") && req.RevisionEpoch != page.Position.Epoch {
		return nil, newError(protocol.ErrorUnrecoverablePosition, "unrecoverable position: revision_epoch %q is not the stream's epoch %q", req.RevisionEpoch, page.Position.Epoch)
	}
	res := &mapReadStateResult{Entries: make([]mapEntry, len(page.Entries)), Offset: page.Position.Offset, Epoch: page.Position.Epoch, Cursor: page.Cursor}
	for i, p := range page.Entries {
		res.Entries[i] = toMapEntry(p)
	}
	return res, nil
}

func (a *handler) mapReadStream(ctx context.Context, req *mapReadStreamRequest) (*mapReadStreamResult, *Error) {
	if req.Limit < -1 {
		return nil, badRequest("limit: want -1 (all), 0 (position only) or a positive number, got %d", req.Limit)
	}
	since, e := req.position()
	if e != nil {
		return nil, e
	}
	pubs, pos, err := a.hub.MapStream(ctx, req.Channel, since, int(min(req.Limit, 1<<31-1)), req.Reverse)
	if err != nil {
		var he *hub.Error
		if errors.As(err, &he) && he.Code == protocol.ErrorUnrecoverablePosition {
			return nil, newError(protocol.ErrorUnrecoverablePosition, "unrecoverable position: since.epoch %q is not the stream's epoch %q", since.Epoch, pos.Epoch)
		}
		return nil, a.fromMapHub(ctx, "map_read_stream", req.Channel, err)
	}
	res := &mapReadStreamResult{Entries: make([]mapEntry, len(pubs)), Offset: pos.Offset, Epoch: pos.Epoch}
	for i, p := range pubs {
		res.Entries[i] = toMapEntry(p)
	}
	return res, nil
}

// position is the request's since: nil (from the stream's start) when
// neither form is set, as Centrifugo reads since_offset 0 with no
// since_epoch.
func (r *mapReadStreamRequest) position() (*engine.StreamPosition, *Error) {
	flat := r.SinceOffset != 0 || r.SinceEpoch != ""
	switch {
	case r.Since != nil && flat:
		return nil, badRequest("since: give since {offset, epoch} or since_offset and since_epoch, not both")
	case r.Since != nil:
		return &engine.StreamPosition{Offset: r.Since.Offset, Epoch: r.Since.Epoch}, nil
	case flat:
		return &engine.StreamPosition{Offset: r.SinceOffset, Epoch: r.SinceEpoch}, nil
	}
	return nil, nil
}

func (a *handler) mapStats(ctx context.Context, req *channelRequest) (*mapStatsResult, *Error) {
	st, err := a.hub.MapStats(ctx, req.Channel)
	if err != nil {
		return nil, a.fromMapHub(ctx, "map_stats", req.Channel, err)
	}
	return &mapStatsResult{NumKeys: st.NumKeys}, nil
}

func (a *handler) mapClear(ctx context.Context, req *channelRequest) (*emptyResult, *Error) {
	if err := a.hub.MapClear(ctx, req.Channel); err != nil {
		return nil, a.fromMapHub(ctx, "map_clear", req.Channel, err)
	}
	return &emptyResult{}, nil
}

// fromMapHub is fromHub for the map methods, whose 107 may be about the
// namespace or the key, not the channel's name.
func (a *handler) fromMapHub(ctx context.Context, method, ch string, err error) *Error {
	var he *hub.Error
	if errors.As(err, &he) && he.Code == protocol.ErrorBadRequest && he.Message == protocol.ErrorBadRequest.Message() {
		return badRequest("bad request: the channel must be in a map namespace, and the key at most %d bytes without control characters, the limit at most the namespace's map.max_page_size, the data of its publication_data_format", hub.MaxMapKeyLength)
	}
	if errors.As(err, &he) && he.Code == protocol.ErrorNotAvailable {
		return notAvailable("map channels: the engine keeps no map state")
	}
	return a.fromHub(ctx, method, ch, "", err)
}
