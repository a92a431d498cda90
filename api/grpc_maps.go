package api

import "github.com/heraldhq/herald/api/grpcapi/apiproto"

// The map methods' conversions between api.proto's messages (Centrifugo
// 6.9.1's internal/apiproto/api.proto: MapPublish … MapClear) and the
// HTTP API's request and result types. Every field of a request is
// carried over, so that an option Herald does not implement is refused by
// the method as over HTTP rather than dropped here.

func fromPBMapPublish(r *apiproto.MapPublishRequest) *mapPublishRequest {
	return &mapPublishRequest{
		Channel: r.GetChannel(), Key: r.GetKey(), Data: r.GetData(), B64Data: r.GetB64Data(),
		StreamData: r.GetStreamData(), B64StreamData: r.GetB64StreamData(), Tags: r.GetTags(),
		IdempotencyKey: r.GetIdempotencyKey(), Delta: r.GetDelta(), Version: r.GetVersion(),
		VersionEpoch: r.GetVersionEpoch(), Score: r.GetScore(), KeyMode: r.GetKeyMode(),
	}
}

func toPBMapPublish(r *mapChangeResult) *apiproto.MapPublishResult {
	return &apiproto.MapPublishResult{Offset: r.Offset, Epoch: r.Epoch, Suppressed: r.Suppressed, SuppressReason: r.SuppressReason}
}

func fromPBMapRemove(r *apiproto.MapRemoveRequest) *mapRemoveRequest {
	return &mapRemoveRequest{Channel: r.GetChannel(), Key: r.GetKey(), IdempotencyKey: r.GetIdempotencyKey()}
}

func toPBMapRemove(r *mapChangeResult) *apiproto.MapRemoveResult {
	return &apiproto.MapRemoveResult{Offset: r.Offset, Epoch: r.Epoch, Suppressed: r.Suppressed, SuppressReason: r.SuppressReason}
}

func fromPBMapReadState(r *apiproto.MapReadStateRequest) *mapReadStateRequest {
	return &mapReadStateRequest{
		Channel: r.GetChannel(), Cursor: r.GetCursor(), Limit: int64(r.GetLimit()), Key: r.GetKey(),
		Asc: r.GetAsc(), RevisionOffset: r.GetRevisionOffset(), RevisionEpoch: r.GetRevisionEpoch(),
	}
}

func toPBMapReadState(r *mapReadStateResult) *apiproto.MapReadStateResult {
	return &apiproto.MapReadStateResult{Entries: toPBMapEntries(r.Entries), Offset: r.Offset, Epoch: r.Epoch, Cursor: r.Cursor}
}

func fromPBMapReadStream(r *apiproto.MapReadStreamRequest) *mapReadStreamRequest {
	return &mapReadStreamRequest{
		Channel: r.GetChannel(), SinceOffset: r.GetSinceOffset(), SinceEpoch: r.GetSinceEpoch(),
		Limit: int64(r.GetLimit()), Reverse: r.GetReverse(),
	}
}

func toPBMapReadStream(r *mapReadStreamResult) *apiproto.MapReadStreamResult {
	return &apiproto.MapReadStreamResult{Entries: toPBMapEntries(r.Entries), Offset: r.Offset, Epoch: r.Epoch}
}

// toPBMapEntries converts entries to MapEntry messages, which have no
// field for the publishing client's info.
func toPBMapEntries(entries []mapEntry) []*apiproto.MapEntry {
	out := make([]*apiproto.MapEntry, len(entries))
	for i, e := range entries {
		out[i] = &apiproto.MapEntry{Key: e.Key, Data: e.Data, Tags: e.Tags, Offset: e.Offset, Score: e.Score, Removed: e.Removed, Time: e.Time}
	}
	return out
}

func fromPBMapStats(r *apiproto.MapStatsRequest) *channelRequest {
	return &channelRequest{Channel: r.GetChannel()}
}

func toPBMapStats(r *mapStatsResult) *apiproto.MapStatsResult {
	return &apiproto.MapStatsResult{NumKeys: int32(min(r.NumKeys, 1<<31-1))}
}

func fromPBMapClear(r *apiproto.MapClearRequest) *channelRequest {
	return &channelRequest{Channel: r.GetChannel()}
}
