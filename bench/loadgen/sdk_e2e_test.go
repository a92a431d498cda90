//go:build benchsdk

package loadgen_test

import (
	"testing"

	"github.com/heraldhq/herald/bench/loadgen"
)

// TestSDKClientsAgainstHerald: the centrifuge-go client counts every copy
// as the light one does. Run with
// GOLANG_PROTOBUF_REGISTRATION_CONFLICT=warn go test -tags benchsdk (sdk.go).
func TestSDKClientsAgainstHerald(t *testing.T) {
	testClientKind(t, loadgen.ClientSDK)
}
