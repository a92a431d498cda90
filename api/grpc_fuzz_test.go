package api_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
)

// descCapture is a grpc.ServiceRegistrar that keeps what is registered.
type descCapture struct {
	desc *grpc.ServiceDesc
	impl any
}

func (d *descCapture) RegisterService(desc *grpc.ServiceDesc, impl any) { d.desc, d.impl = desc, impl }

// FuzzGRPCService decodes arbitrary bytes as the request of every rpc of
// the gRPC API, as grpc-go hands a message to the service, and runs it on a
// hub of the memory engine: bad input must never panic, and a request that
// decodes must get a response whose error, if any, is not an internal one
// (code 100) and has a message.
func FuzzGRPCService(f *testing.F) {
	quiet := slog.New(slog.DiscardHandler)
	channels := testChannels()
	channels.WithoutNamespace.HistoryTTL = 2 * time.Second
	h := startHub(f, hub.Config{
		Engine: memory.New(memory.Config{HistoryMetaTTL: 2 * time.Second}), Name: "fuzz-node",
		Channels: channels, Logger: quiet,
	})
	svc, err := api.NewGRPCService(h, api.Config{Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	var reg descCapture
	svc.Register(&reg)
	methods := reg.desc.Methods
	index := map[string]int{}
	for i, m := range methods {
		index[m.MethodName] = i
	}
	seed := func(method string, m proto.Message) {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		i, ok := index[method]
		if !ok {
			f.Fatalf("no rpc %s", method)
		}
		f.Add(uint8(i), b)
	}
	seed("Publish", &apiproto.PublishRequest{Channel: "chat", Data: []byte(`{"text":"hi"}`), Tags: map[string]string{"k": "v"}})
	seed("Publish", &apiproto.PublishRequest{Channel: "bin:x", Data: []byte{0, 1, 2}, B64Data: "AAEC"})
	seed("Broadcast", &apiproto.BroadcastRequest{Channels: []string{"chat", "plain:x", ""}, Data: []byte(`1`)})
	seed("History", &apiproto.HistoryRequest{Channel: "chat", Limit: -1, Reverse: true, Since: &apiproto.StreamPosition{Offset: 3, Epoch: "e"}})
	seed("Presence", &apiproto.PresenceRequest{Channel: "chat"})
	seed("Channels", &apiproto.ChannelsRequest{Pattern: "plain:*"})
	seed("Disconnect", &apiproto.DisconnectRequest{User: "u", Disconnect: &apiproto.Disconnect{Code: 4000, Reason: "r"}})
	seed("Batch", &apiproto.BatchRequest{Commands: []*apiproto.Command{
		{Publish: &apiproto.PublishRequest{Channel: "chat", Data: []byte(`1`)}},
		{History: &apiproto.HistoryRequest{Channel: "plain:room", Limit: 1 << 30}},
		{Info: &apiproto.InfoRequest{}},
	}, Parallel: true})
	for i := range methods {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, method uint8, body []byte) {
		m := methods[int(method)%len(methods)]
		dec := func(v any) error { return proto.Unmarshal(body, v.(proto.Message)) }
		out, err := m.Handler(reg.impl, ctx, dec, nil)
		if err != nil {
			return // not a message of the rpc's type: grpc answers the decode error
		}
		msg, ok := out.(proto.Message)
		if !ok || msg == nil {
			t.Fatalf("%s %x: response %T", m.MethodName, body, out)
		}
		checkPBErrors(t, m.MethodName, body, msg.ProtoReflect())
	})
}

// checkPBErrors fails on an error field, in msg or its replies, that is
// internal (code 100) or says nothing.
func checkPBErrors(t *testing.T, method string, body []byte, msg protoreflect.Message) {
	t.Helper()
	fields := msg.Descriptor().Fields()
	if fd := fields.ByName("error"); fd != nil && msg.Has(fd) {
		e := msg.Get(fd).Message()
		code := e.Get(e.Descriptor().Fields().ByName("code")).Uint()
		text := e.Get(e.Descriptor().Fields().ByName("message")).String()
		if code == 100 || text == "" {
			t.Fatalf("%s %x: error %d %q", method, body, code, text)
		}
	}
	if fd := fields.ByName("replies"); fd != nil && fd.IsList() {
		l := msg.Get(fd).List()
		for i := range l.Len() {
			checkPBErrors(t, method, body, l.Get(i).Message())
		}
	}
}
