package proxyproto_test

import (
	"testing"

	"github.com/heraldhq/herald/internal/test/protogen"
	"github.com/heraldhq/herald/proxy/proxyproto"
)

// TestWireInterface: proxy.proto declares the wire interface of
// Centrifugo's gRPC proxy protocol (service, methods, messages, field
// names, numbers and types, reserved numbers) as Centrifugo publishes it
// (internal/proxyproto/proxy.proto in centrifugal/centrifugo), so that
// a backend generated from Centrifugo's file serves Herald unchanged. The
// table is written from Centrifugo's file, as facts: change it only to
// follow Centrifugo's interface (a field it adds), never to let a
// renumbered, renamed or retyped field pass.
func TestWireInterface(t *testing.T) {
	protogen.Interface(t, proxyproto.File_proxy_proto, `
package centrifugal.centrifugo.proxy
rpc CentrifugoProxy.Connect ConnectRequest -> ConnectResponse
rpc CentrifugoProxy.MapPublish MapPublishRequest -> MapPublishResponse
rpc CentrifugoProxy.MapRemove MapRemoveRequest -> MapRemoveResponse
rpc CentrifugoProxy.NotifyCacheEmpty NotifyCacheEmptyRequest -> NotifyCacheEmptyResponse
rpc CentrifugoProxy.NotifyChannelState NotifyChannelStateRequest -> NotifyChannelStateResponse
rpc CentrifugoProxy.Publish PublishRequest -> PublishResponse
rpc CentrifugoProxy.RPC RPCRequest -> RPCResponse
rpc CentrifugoProxy.Refresh RefreshRequest -> RefreshResponse
rpc CentrifugoProxy.SharedPollRefresh SharedPollRefreshRequest -> SharedPollRefreshResponse
rpc CentrifugoProxy.SubRefresh SubRefreshRequest -> SubRefreshResponse
rpc CentrifugoProxy.Subscribe SubscribeRequest -> SubscribeResponse
rpc CentrifugoProxy.SubscribeBidirectional stream StreamSubscribeRequest -> stream StreamSubscribeResponse
rpc CentrifugoProxy.SubscribeUnidirectional SubscribeRequest -> stream StreamSubscribeResponse

field BoolValue 1 value bool

field SharedPollRefreshItem 1 key string
field SharedPollRefreshItem 2 version uint64
field SharedPollRefreshRequest 1 channel string
field SharedPollRefreshRequest 2 items repeated SharedPollRefreshItem
field SharedPollRefreshResponse 1 result SharedPollRefreshResult
field SharedPollRefreshResponse 2 error Error
field SharedPollRefreshResult 1 items repeated SharedPollRefreshResultItem
field SharedPollRefreshResult 2 epoch string
field SharedPollRefreshResultItem 1 key string
field SharedPollRefreshResultItem 2 data bytes
field SharedPollRefreshResultItem 3 version uint64
field SharedPollRefreshResultItem 4 removed bool
field SharedPollRefreshResultItem 5 prev_data bytes

field ChannelEvent 1 time_ms int64
field ChannelEvent 2 channel string
field ChannelEvent 3 type string

field ChannelsCapability 1 channels repeated string
field ChannelsCapability 2 allow repeated string
field ChannelsCapability 3 match string

field ConnectRequest 1 client string
field ConnectRequest 2 transport string
field ConnectRequest 3 protocol string
field ConnectRequest 4 encoding string
field ConnectRequest 10 data bytes
field ConnectRequest 11 b64data string
field ConnectRequest 12 name string
field ConnectRequest 13 version string
field ConnectRequest 14 channels repeated string

field ConnectResponse 1 result ConnectResult
field ConnectResponse 2 error Error
field ConnectResponse 3 disconnect Disconnect

field ConnectResult 1 user string
field ConnectResult 2 expire_at int64
field ConnectResult 3 info bytes
field ConnectResult 4 b64info string
field ConnectResult 5 data bytes
field ConnectResult 6 b64data string
field ConnectResult 7 channels repeated string
field ConnectResult 8 subs map<string, SubscribeOptions>
field ConnectResult 9 meta bytes
field ConnectResult 10 caps repeated ChannelsCapability

field Disconnect 1 code uint32
field Disconnect 2 reason string
reserved Disconnect 3

field Error 1 code uint32
field Error 2 message string
field Error 3 temporary bool

field Int32Value 1 value int32

field MapPublishRequest 1 client string
field MapPublishRequest 2 transport string
field MapPublishRequest 3 protocol string
field MapPublishRequest 4 encoding string
field MapPublishRequest 10 user string
field MapPublishRequest 11 channel string
field MapPublishRequest 12 key string
field MapPublishRequest 13 data bytes
field MapPublishRequest 14 b64data string
field MapPublishRequest 15 meta bytes

field MapPublishResponse 1 result MapPublishResult
field MapPublishResponse 2 error Error
field MapPublishResponse 3 disconnect Disconnect

field MapPublishResult 1 key string
field MapPublishResult 2 data bytes
field MapPublishResult 3 b64data string
field MapPublishResult 4 tags map<string, string>
field MapPublishResult 5 score int64
field MapPublishResult 6 key_mode string
field MapPublishResult 7 stream_data bytes
field MapPublishResult 8 b64stream_data string
field MapPublishResult 9 idempotency_key string
field MapPublishResult 10 delta bool
field MapPublishResult 11 version uint64
field MapPublishResult 12 version_epoch string

field MapRemoveRequest 1 client string
field MapRemoveRequest 2 transport string
field MapRemoveRequest 3 protocol string
field MapRemoveRequest 4 encoding string
field MapRemoveRequest 10 user string
field MapRemoveRequest 11 channel string
field MapRemoveRequest 12 key string
field MapRemoveRequest 13 meta bytes

field MapRemoveResponse 1 result MapRemoveResult
field MapRemoveResponse 2 error Error
field MapRemoveResponse 3 disconnect Disconnect

field MapRemoveResult 1 key string
field MapRemoveResult 2 tags map<string, string>
field MapRemoveResult 3 idempotency_key string

field NotifyCacheEmptyRequest 1 channel string

field NotifyCacheEmptyResponse 1 result NotifyCacheEmptyResult

field NotifyCacheEmptyResult 1 populated bool

field NotifyChannelStateRequest 1 events repeated ChannelEvent

field NotifyChannelStateResponse 1 result NotifyChannelStateResult
field NotifyChannelStateResponse 2 error Error

message NotifyChannelStateResult

field Publication 4 data bytes
field Publication 7 tags map<string, string>
reserved Publication 1
reserved Publication 2
reserved Publication 3
reserved Publication 5
reserved Publication 6

field PublishRequest 1 client string
field PublishRequest 2 transport string
field PublishRequest 3 protocol string
field PublishRequest 4 encoding string
field PublishRequest 10 user string
field PublishRequest 11 channel string
field PublishRequest 12 data bytes
field PublishRequest 13 b64data string
field PublishRequest 14 meta bytes

field PublishResponse 1 result PublishResult
field PublishResponse 2 error Error
field PublishResponse 3 disconnect Disconnect

field PublishResult 1 data bytes
field PublishResult 2 b64data string
field PublishResult 3 skip_history bool

field RPCRequest 1 client string
field RPCRequest 2 transport string
field RPCRequest 3 protocol string
field RPCRequest 4 encoding string
field RPCRequest 10 user string
field RPCRequest 11 method string
field RPCRequest 12 data bytes
field RPCRequest 13 b64data string
field RPCRequest 14 meta bytes

field RPCResponse 1 result RPCResult
field RPCResponse 2 error Error
field RPCResponse 3 disconnect Disconnect

field RPCResult 1 data bytes
field RPCResult 2 b64data string

field RefreshRequest 1 client string
field RefreshRequest 2 transport string
field RefreshRequest 3 protocol string
field RefreshRequest 4 encoding string
field RefreshRequest 10 user string
field RefreshRequest 11 meta bytes

field RefreshResponse 1 result RefreshResult
field RefreshResponse 2 error Error
field RefreshResponse 3 disconnect Disconnect

field RefreshResult 1 expired bool
field RefreshResult 2 expire_at int64
field RefreshResult 3 info bytes
field RefreshResult 4 b64info string
field RefreshResult 5 meta bytes
field RefreshResult 6 caps repeated ChannelsCapability

field StreamSubscribeRequest 1 subscribe_request SubscribeRequest
field StreamSubscribeRequest 2 publication Publication

field StreamSubscribeResponse 1 subscribe_response SubscribeResponse
field StreamSubscribeResponse 2 publication Publication

field SubRefreshRequest 1 client string
field SubRefreshRequest 2 transport string
field SubRefreshRequest 3 protocol string
field SubRefreshRequest 4 encoding string
field SubRefreshRequest 10 user string
field SubRefreshRequest 11 channel string
field SubRefreshRequest 12 meta bytes

field SubRefreshResponse 1 result SubRefreshResult
field SubRefreshResponse 2 error Error
field SubRefreshResponse 3 disconnect Disconnect

field SubRefreshResult 1 expired bool
field SubRefreshResult 2 expire_at int64
field SubRefreshResult 3 info bytes
field SubRefreshResult 4 b64info string

field SubscribeOptionOverride 1 presence BoolValue
field SubscribeOptionOverride 2 join_leave BoolValue
field SubscribeOptionOverride 3 force_recovery BoolValue
field SubscribeOptionOverride 4 force_positioning BoolValue
field SubscribeOptionOverride 5 force_push_join_leave BoolValue

field SubscribeOptions 1 expire_at int64
field SubscribeOptions 2 info bytes
field SubscribeOptions 3 b64info string
field SubscribeOptions 4 data bytes
field SubscribeOptions 5 b64data string
field SubscribeOptions 6 override SubscribeOptionOverride

field SubscribeRequest 1 client string
field SubscribeRequest 2 transport string
field SubscribeRequest 3 protocol string
field SubscribeRequest 4 encoding string
field SubscribeRequest 10 user string
field SubscribeRequest 11 channel string
field SubscribeRequest 12 token string
field SubscribeRequest 13 meta bytes
field SubscribeRequest 14 data bytes
field SubscribeRequest 15 b64data string

field SubscribeResponse 1 result SubscribeResult
field SubscribeResponse 2 error Error
field SubscribeResponse 3 disconnect Disconnect

field SubscribeResult 1 expire_at int64
field SubscribeResult 2 info bytes
field SubscribeResult 3 b64info string
field SubscribeResult 4 data bytes
field SubscribeResult 5 b64data string
field SubscribeResult 6 override SubscribeOptionOverride
field SubscribeResult 7 allow repeated string
`)
}
