package protocol

import (
	"strings"
	"testing"
)

// benchData returns a 128-byte JSON publication payload.
func benchData() []byte {
	return []byte(`{"text":"` + strings.Repeat("a", 128-len(`{"text":""}`)) + `"}`)
}

func benchPush() *Push {
	return &Push{Channel: "chat:room-42", Pub: &Publication{
		Data:   benchData(),
		Info:   &ClientInfo{User: "user-1234", Client: "5a6f1e2c-8a3b-4b7e-9d21-0c4f7a9b3e11"},
		Offset: 123456,
	}}
}

func BenchmarkAppendPush(b *testing.B) {
	if n := len(benchData()); n != 128 {
		b.Fatalf("payload is %d bytes", n)
	}
	for _, typ := range []Type{TypeJSON, TypeProtobuf} {
		b.Run(typ.String(), func(b *testing.B) {
			push := benchPush()
			dst := make([]byte, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, err = AppendPush(typ, dst[:0], push); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(dst)))
		})
	}
}

func BenchmarkAppendReply(b *testing.B) {
	reply := &Reply{Id: 72, Subscribe: &SubscribeResult{
		Recoverable: true, Epoch: "MjmHRReq", Offset: 3, Positioned: true, WasRecovering: true,
		Publications: []*Publication{benchPush().Pub, benchPush().Pub},
	}}
	for _, typ := range []Type{TypeJSON, TypeProtobuf} {
		b.Run(typ.String(), func(b *testing.B) {
			dst := make([]byte, 0, 2048)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, err = AppendReply(typ, dst[:0], reply); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(dst)))
		})
	}
}

func BenchmarkDecodeCommands(b *testing.B) {
	cmd := &Command{Id: 3, Publish: &PublishRequest{Channel: "chat:room-42", Data: benchData()}}
	for _, typ := range []Type{TypeJSON, TypeProtobuf} {
		b.Run(typ.String(), func(b *testing.B) {
			msg, err := AppendCommand(typ, nil, cmd)
			if err != nil {
				b.Fatal(err)
			}
			frame := AppendMessage(typ, nil, msg)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				cmds, err := DecodeCommands(typ, frame)
				if err != nil || len(cmds) != 1 {
					b.Fatal(cmds, err)
				}
			}
		})
	}
}
