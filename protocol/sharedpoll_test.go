package protocol

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestDecodeTrackJSON decodes a track command as centrifuge-js 5.8 sends it
// (a key without a version has none) and the same in Protobuf.
func TestDecodeTrackJSON(t *testing.T) {
	frame := `{"id":7,"sub_refresh":{"channel":"poll:a","type":1,"track":[{"signature":"1:2:ab","items":[{"key":"k1","version":3},{"key":"k2"}]}],"untrack":["k0"]}}`
	want := &Command{Id: 7, SubRefresh: &SubRefreshRequest{
		Channel: "poll:a", Type: 1,
		Track:   []*TrackBatch{{Signature: "1:2:ab", Items: []*KeyedItem{{Key: "k1", Version: 3}, {Key: "k2"}}}},
		Untrack: []string{"k0"},
	}}
	got, err := DecodeCommands(TypeJSON, []byte(frame))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !proto.Equal(got[0], want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	pb, err := AppendCommand(TypeProtobuf, nil, want)
	if err != nil {
		t.Fatal(err)
	}
	got, err = DecodeCommands(TypeProtobuf, AppendMessage(TypeProtobuf, nil, pb))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !proto.Equal(got[0], want) {
		t.Fatalf("protobuf: got %v, want %v", got, want)
	}
}
