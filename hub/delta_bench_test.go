package hub_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/protocol"
)

// BenchmarkDeltaBytesPerPublication measures the bytes one subscriber
// receives per publication of a ~2 KB JSON document that changes one field
// each time, with and without fossil delta, over JSON and Protobuf
// (bytes/pub; the first, full publication is spread over b.N).
func BenchmarkDeltaBytesPerPublication(b *testing.B) {
	for _, proto := range []protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf} {
		for _, delta := range []string{"", hub.DeltaFossil} {
			name := fmt.Sprintf("%s/delta=%s", map[protocol.Type]string{protocol.TypeJSON: "json", protocol.TypeProtobuf: "protobuf"}[proto], delta)
			if delta == "" {
				name += "none"
			}
			b.Run(name, func(b *testing.B) { benchDeltaBytes(b, proto, delta) })
		}
	}
}

func benchDeltaBytes(b *testing.B, proto protocol.Type, delta string) {
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Client: hub.ClientConfig{Insecure: true},
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, AllowedDeltaTypes: []string{hub.DeltaFossil},
		}},
		Logger: testLogger(),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer h.Shutdown(context.Background())
	conn, _ := hubtest.Dial(h, proto)
	defer conn.Drop()
	ctx := context.Background()
	send := func(cmd *protocol.Command) {
		msg, err := protocol.AppendCommand(proto, nil, cmd)
		if err != nil {
			b.Fatal(err)
		}
		if err := conn.Send(protocol.AppendMessage(proto, nil, msg)); err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
	send(&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{}})
	send(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "doc", Delta: delta}})
	docs := [2][]byte{deltaDoc(1), deltaDoc(2)}
	var bytes int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Publish(ctx, "doc", docs[i%2], hub.PublishOptions{}); err != nil {
			b.Fatal(err)
		}
		frame, err := conn.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		bytes += int64(len(frame))
	}
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/pub")
}
