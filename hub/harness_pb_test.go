package hub_test

import (
	"testing"

	"github.com/heraldhq/herald/internal/test/pbclient"
	"github.com/heraldhq/herald/protocol"
)

// pbClient is the shared Protobuf protocol client
// (internal/test/pbclient), with connection tokens signed by the test
// secret.
type pbClient = pbclient.Client

// dialProtobuf connects a Protobuf client.
func (n *node) dialProtobuf(t *testing.T) *pbClient {
	t.Helper()
	return pbclient.New(t, n.dialWire(t, protocol.TypeProtobuf), testSecret)
}
