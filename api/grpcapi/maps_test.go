package grpcapi_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api/grpcapi"
	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/protocol"
)

// startMapHub starts a hub whose namespace "board" is a persistent map.
func startMapHub(t *testing.T) *hub.Hub {
	t.Helper()
	return hubtest.Start(t, hub.Config{
		Engine: memory.New(memory.Config{}), Logger: slog.New(slog.DiscardHandler),
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{{Name: "board", NamespaceOptions: hub.NamespaceOptions{
			SubscriptionType: hub.SubscriptionMap, Map: hub.MapOptions{Mode: hub.MapPersistent, MinPageSize: 1, MaxPageSize: 100},
		}}}},
	})
}

// entryKeys lists the keys of entries, a removal as "-key".
func entryKeys(entries []*apiproto.MapEntry) string {
	var out []string
	for _, e := range entries {
		k := e.GetKey()
		if e.GetRemoved() {
			k = "-" + k
		}
		out = append(out, k)
	}
	return strings.Join(out, ",")
}

// TestMapMethods: the map rpcs of Centrifugo 6.9's api.proto (MapPublish,
// MapRemove, MapReadState, MapReadStream, MapStats, MapClear) run the
// HTTP API's map methods, with their checks and error codes.
func TestMapMethods(t *testing.T) {
	h := startMapHub(t)
	c := dial(t, serve(t, h, grpcapi.Config{Key: testKey}))
	ctx := ctx5s(t)

	var epoch string
	for i, k := range []string{"k0", "k1", "k2"} {
		r, err := c.MapPublish(ctx, &apiproto.MapPublishRequest{Channel: "board:a", Key: k, Data: []byte(`{"v":1}`)})
		if err != nil || r.Error != nil || r.Result.GetOffset() != uint64(i+1) || r.Result.GetEpoch() == "" || r.Result.GetSuppressed() {
			t.Fatalf("map publish %s: %v, %v", k, r, err)
		}
		epoch = r.Result.Epoch
	}
	rm, err := c.MapRemove(ctx, &apiproto.MapRemoveRequest{Channel: "board:a", Key: "k1"})
	if err != nil || rm.Error != nil || rm.Result.GetOffset() != 4 || rm.Result.GetEpoch() != epoch {
		t.Fatalf("map remove: %v, %v", rm, err)
	}
	st, err := c.MapStats(ctx, &apiproto.MapStatsRequest{Channel: "board:a"})
	if err != nil || st.Error != nil || st.Result.GetNumKeys() != 2 {
		t.Fatalf("map stats: %v, %v", st, err)
	}

	page, err := c.MapReadState(ctx, &apiproto.MapReadStateRequest{Channel: "board:a", Limit: 1})
	if err != nil || page.Error != nil || entryKeys(page.Result.GetEntries()) != "k0" || page.Result.Cursor != "k0" ||
		page.Result.Offset != 4 || page.Result.Epoch != epoch {
		t.Fatalf("map read state: %v, %v", page, err)
	}
	if e := page.Result.Entries[0]; string(e.Data) != `{"v":1}` || e.Offset != 1 || e.Time <= 0 {
		t.Fatalf("map entry: %v", e)
	}
	last, err := c.MapReadState(ctx, &apiproto.MapReadStateRequest{Channel: "board:a", Cursor: page.Result.Cursor})
	if err != nil || entryKeys(last.Result.GetEntries()) != "k2" || last.Result.Cursor != "" {
		t.Fatalf("map read state, last page: %v, %v", last, err)
	}

	stream, err := c.MapReadStream(ctx, &apiproto.MapReadStreamRequest{Channel: "board:a", SinceOffset: 2, SinceEpoch: epoch, Limit: -1})
	if err != nil || stream.Error != nil || entryKeys(stream.Result.GetEntries()) != "k2,-k1" || stream.Result.Offset != 4 {
		t.Fatalf("map read stream: %v, %v", stream, err)
	}
	all, err := c.MapReadStream(ctx, &apiproto.MapReadStreamRequest{Channel: "board:a", Limit: -1})
	if err != nil || entryKeys(all.Result.GetEntries()) != "k0,k1,k2,-k1" {
		t.Fatalf("map read stream from the start: %v, %v", all, err)
	}

	// The HTTP API's checks and codes.
	for _, tc := range []struct {
		what string
		call func() (*apiproto.Error, error)
		code protocol.ErrorCode
		msg  string
	}{
		{"publish without a key", func() (*apiproto.Error, error) {
			r, err := c.MapPublish(ctx, &apiproto.MapPublishRequest{Channel: "board:a", Data: []byte(`1`)})
			return r.GetError(), err
		}, protocol.ErrorBadRequest, "key required"},
		{"publish to a stream channel", func() (*apiproto.Error, error) {
			r, err := c.MapPublish(ctx, &apiproto.MapPublishRequest{Channel: "plain", Key: "k", Data: []byte(`1`)})
			return r.GetError(), err
		}, protocol.ErrorBadRequest, "map namespace"},
		{"read state at a revision of another epoch", func() (*apiproto.Error, error) {
			r, err := c.MapReadState(ctx, &apiproto.MapReadStateRequest{Channel: "board:a", RevisionOffset: 1, RevisionEpoch: "other"})
			return r.GetError(), err
		}, protocol.ErrorUnrecoverablePosition, "revision_epoch"},
		{"read stream from another epoch", func() (*apiproto.Error, error) {
			r, err := c.MapReadStream(ctx, &apiproto.MapReadStreamRequest{Channel: "board:a", SinceOffset: 1, SinceEpoch: "other"})
			return r.GetError(), err
		}, protocol.ErrorUnrecoverablePosition, "unrecoverable position"},
	} {
		e, err := tc.call()
		if err != nil || e.GetCode() != uint32(tc.code) || !strings.Contains(e.GetMessage(), tc.msg) {
			t.Errorf("%s: error %v, %v; want %d containing %q", tc.what, e, err, tc.code, tc.msg)
		}
	}

	clr, err := c.MapClear(ctx, &apiproto.MapClearRequest{Channel: "board:a"})
	if err != nil || clr.Error != nil || clr.Result == nil {
		t.Fatalf("map clear: %v, %v", clr, err)
	}
	st, err = c.MapStats(ctx, &apiproto.MapStatsRequest{Channel: "board:a"})
	if err != nil || st.Result.GetNumKeys() != 0 {
		t.Fatalf("map stats after clear: %v, %v", st, err)
	}
	after, err := c.MapReadStream(ctx, &apiproto.MapReadStreamRequest{Channel: "board:a"})
	if err != nil || after.Result.GetEpoch() == epoch {
		t.Fatalf("map read stream after clear: %v, %v (the epoch stayed)", after, err)
	}
}

// TestMapBatch: the batch Command's map fields (36–41 of api.proto) run
// in order, each reply in its own Reply field.
func TestMapBatch(t *testing.T) {
	h := startMapHub(t)
	c := dial(t, serve(t, h, grpcapi.Config{Key: testKey}))
	res, err := c.Batch(ctx5s(t), &apiproto.BatchRequest{Commands: []*apiproto.Command{
		{MapPublish: &apiproto.MapPublishRequest{Channel: "board:b", Key: "a", Data: []byte(`1`)}},
		{MapPublish: &apiproto.MapPublishRequest{Channel: "board:b", Key: "b", Data: []byte(`2`)}},
		{MapRemove: &apiproto.MapRemoveRequest{Channel: "board:b", Key: "a"}},
		{MapStats: &apiproto.MapStatsRequest{Channel: "board:b"}},
		{MapReadState: &apiproto.MapReadStateRequest{Channel: "board:b"}},
		{MapReadStream: &apiproto.MapReadStreamRequest{Channel: "board:b", Limit: -1}},
		{MapClear: &apiproto.MapClearRequest{Channel: "board:b"}},
		{MapStats: &apiproto.MapStatsRequest{Channel: "board:b"}},
		{MapRemove: &apiproto.MapRemoveRequest{Channel: "board:b"}},
	}})
	if err != nil || len(res.GetReplies()) != 9 {
		t.Fatalf("batch: %v, %v", res, err)
	}
	r := res.Replies
	if r[0].GetMapPublish().GetOffset() != 1 || r[1].GetMapPublish().GetOffset() != 2 || r[2].GetMapRemove().GetOffset() != 3 ||
		r[3].GetMapStats().GetNumKeys() != 1 || entryKeys(r[4].GetMapReadState().GetEntries()) != "b" ||
		entryKeys(r[5].GetMapReadStream().GetEntries()) != "a,b,-a" || r[6].GetMapClear() == nil || r[6].Error != nil ||
		r[7].GetMapStats() == nil || r[7].GetMapStats().GetNumKeys() != 0 ||
		r[8].GetError().GetCode() != uint32(protocol.ErrorBadRequest) {
		t.Fatalf("batch replies: %v", r)
	}
}
