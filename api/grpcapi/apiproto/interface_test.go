package apiproto_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/internal/test/protogen"
)

// TestMapWireInterface: the map methods of api.proto (the rpcs, their
// messages and the batch Command and Reply fields) are Centrifugo's, as
// its 6.9.1 release declares them in internal/apiproto/api.proto, so that
// a client generated from Centrifugo's file calls Herald's map methods
// unchanged. The table below is that file's interface, every line naming
// "Map", written as facts: change it only to follow Centrifugo.
func TestMapWireInterface(t *testing.T) {
	var want []string
	for _, l := range strings.Split(centrifugoMapInterface, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			want = append(want, l)
		}
	}
	var got []string
	for _, l := range strings.Split(protogen.Describe(apiproto.File_api_proto), "\n") {
		if strings.Contains(l, "Map") {
			got = append(got, l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("api.proto lacks Centrifugo's %s", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("api.proto declares %s, which Centrifugo does not", l)
		}
	}
}

// centrifugoMapInterface: Centrifugo 6.9.1's internal/apiproto/api.proto,
// the lines of protogen.Describe that name "Map".
const centrifugoMapInterface = `
field Command 36 map_publish MapPublishRequest
field Command 37 map_remove MapRemoveRequest
field Command 38 map_read_state MapReadStateRequest
field Command 39 map_read_stream MapReadStreamRequest
field Command 40 map_stats MapStatsRequest
field Command 41 map_clear MapClearRequest
field MapClearRequest 1 channel string
field MapClearResponse 1 error Error
field MapClearResponse 2 result MapClearResult
field MapEntry 1 key string
field MapEntry 2 data bytes
field MapEntry 3 tags map<string, string>
field MapEntry 4 offset uint64
field MapEntry 5 score int64
field MapEntry 6 removed bool
field MapEntry 7 time int64
field MapPublishRequest 1 channel string
field MapPublishRequest 10 version uint64
field MapPublishRequest 11 version_epoch string
field MapPublishRequest 12 score int64
field MapPublishRequest 13 key_mode string
field MapPublishRequest 2 key string
field MapPublishRequest 3 data bytes
field MapPublishRequest 4 b64data string
field MapPublishRequest 5 stream_data bytes
field MapPublishRequest 6 b64stream_data string
field MapPublishRequest 7 tags map<string, string>
field MapPublishRequest 8 idempotency_key string
field MapPublishRequest 9 delta bool
field MapPublishResponse 1 error Error
field MapPublishResponse 2 result MapPublishResult
field MapPublishResult 1 offset uint64
field MapPublishResult 2 epoch string
field MapPublishResult 3 suppressed bool
field MapPublishResult 4 suppress_reason string
field MapReadStateRequest 1 channel string
field MapReadStateRequest 2 cursor string
field MapReadStateRequest 3 limit int32
field MapReadStateRequest 4 key string
field MapReadStateRequest 5 asc bool
field MapReadStateRequest 6 revision_offset uint64
field MapReadStateRequest 7 revision_epoch string
field MapReadStateResponse 1 error Error
field MapReadStateResponse 2 result MapReadStateResult
field MapReadStateResult 1 entries repeated MapEntry
field MapReadStateResult 2 offset uint64
field MapReadStateResult 3 epoch string
field MapReadStateResult 4 cursor string
field MapReadStreamRequest 1 channel string
field MapReadStreamRequest 2 since_offset uint64
field MapReadStreamRequest 3 since_epoch string
field MapReadStreamRequest 4 limit int32
field MapReadStreamRequest 5 reverse bool
field MapReadStreamResponse 1 error Error
field MapReadStreamResponse 2 result MapReadStreamResult
field MapReadStreamResult 1 entries repeated MapEntry
field MapReadStreamResult 2 offset uint64
field MapReadStreamResult 3 epoch string
field MapRemoveRequest 1 channel string
field MapRemoveRequest 2 key string
field MapRemoveRequest 3 idempotency_key string
field MapRemoveResponse 1 error Error
field MapRemoveResponse 2 result MapRemoveResult
field MapRemoveResult 1 offset uint64
field MapRemoveResult 2 epoch string
field MapRemoveResult 3 suppressed bool
field MapRemoveResult 4 suppress_reason string
field MapStatsRequest 1 channel string
field MapStatsResponse 1 error Error
field MapStatsResponse 2 result MapStatsResult
field MapStatsResult 1 num_keys int32
field Reply 36 map_publish MapPublishResult
field Reply 37 map_remove MapRemoveResult
field Reply 38 map_read_state MapReadStateResult
field Reply 39 map_read_stream MapReadStreamResult
field Reply 40 map_stats MapStatsResult
field Reply 41 map_clear MapClearResult
message MapClearResult
rpc CentrifugoApi.MapClear MapClearRequest -> MapClearResponse
rpc CentrifugoApi.MapPublish MapPublishRequest -> MapPublishResponse
rpc CentrifugoApi.MapReadState MapReadStateRequest -> MapReadStateResponse
rpc CentrifugoApi.MapReadStream MapReadStreamRequest -> MapReadStreamResponse
rpc CentrifugoApi.MapRemove MapRemoveRequest -> MapRemoveResponse
rpc CentrifugoApi.MapStats MapStatsRequest -> MapStatsResponse
`
