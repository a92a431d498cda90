package unistream_test

import (
	"testing"

	"github.com/heraldhq/herald/internal/test/protogen"
	"github.com/heraldhq/herald/transport/unigrpc/unistream"
)

// TestWireInterface: unistream.proto declares the wire interface of
// Centrifugo's uni_grpc protocol (service, methods, messages, field
// names, numbers and types, reserved numbers) as Centrifugo publishes it
// (internal/unigrpc/unistream/unistream.proto in centrifugal/centrifugo),
// so that a client generated from Centrifugo's file consumes Herald
// unchanged. The table is written from Centrifugo's file, as facts: change
// it only to follow Centrifugo's interface (a field it adds), never to let
// a renumbered, renamed or retyped field pass.
func TestWireInterface(t *testing.T) {
	protogen.Interface(t, unistream.File_unistream_proto, `
package centrifugal.centrifugo.unistream
rpc CentrifugoUniStream.Consume ConnectRequest -> stream Push

field ClientInfo 1 user string
field ClientInfo 2 client string
field ClientInfo 3 conn_info bytes
field ClientInfo 4 chan_info bytes

field Connect 1 client string
field Connect 2 version string
field Connect 3 data bytes
field Connect 4 subs map<string, SubscribeResult>
field Connect 5 expires bool
field Connect 6 ttl uint32
field Connect 7 ping uint32
field Connect 8 pong bool
field Connect 9 session string
field Connect 10 node string

field ConnectRequest 1 token string
field ConnectRequest 2 data bytes
field ConnectRequest 3 subs map<string, SubscribeRequest>
field ConnectRequest 4 name string
field ConnectRequest 5 version string
field ConnectRequest 6 headers map<string, string>

field Disconnect 1 code uint32
field Disconnect 2 reason string
field Disconnect 3 reconnect bool

field Join 1 info ClientInfo

field Leave 1 info ClientInfo

field Message 1 data bytes

field Publication 4 data bytes
field Publication 5 info ClientInfo
field Publication 6 offset uint64
field Publication 7 tags map<string, string>
reserved Publication 1
reserved Publication 2
reserved Publication 3

field Push 2 channel string
field Push 4 pub Publication
field Push 5 join Join
field Push 6 leave Leave
field Push 7 unsubscribe Unsubscribe
field Push 8 message Message
field Push 9 subscribe Subscribe
field Push 10 connect Connect
field Push 11 disconnect Disconnect
field Push 12 refresh Refresh
reserved Push 1
reserved Push 3

field Refresh 1 expires bool
field Refresh 2 ttl uint32

field Subscribe 1 recoverable bool
field Subscribe 4 epoch string
field Subscribe 5 offset uint64
field Subscribe 6 positioned bool
field Subscribe 7 data bytes
reserved Subscribe 2
reserved Subscribe 3

field SubscribeRequest 3 recover bool
field SubscribeRequest 6 epoch string
field SubscribeRequest 7 offset uint64
reserved SubscribeRequest 4
reserved SubscribeRequest 5

field SubscribeResult 1 expires bool
field SubscribeResult 2 ttl uint32
field SubscribeResult 3 recoverable bool
field SubscribeResult 6 epoch string
field SubscribeResult 7 publications repeated Publication
field SubscribeResult 8 recovered bool
field SubscribeResult 9 offset uint64
field SubscribeResult 10 positioned bool
field SubscribeResult 11 data bytes
field SubscribeResult 12 was_recovering bool
reserved SubscribeResult 4
reserved SubscribeResult 5

field Unsubscribe 2 code uint32
field Unsubscribe 3 reason string
reserved Unsubscribe 1
`)
}
