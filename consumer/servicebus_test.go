package consumer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// fakeReceiver records how each message was settled.
type fakeReceiver struct {
	mu      sync.Mutex
	settled []string // "complete <id>", "deadletter <id> <reason>: <description>", "abandon <id>"
}

func (f *fakeReceiver) note(s string) {
	f.mu.Lock()
	f.settled = append(f.settled, s)
	f.mu.Unlock()
}

func (f *fakeReceiver) ReceiveMessages(context.Context, int, *azservicebus.ReceiveMessagesOptions) ([]*azservicebus.ReceivedMessage, error) {
	return nil, errors.New("not used")
}

func (f *fakeReceiver) CompleteMessage(_ context.Context, m *azservicebus.ReceivedMessage, _ *azservicebus.CompleteMessageOptions) error {
	f.note("complete " + m.MessageID)
	return nil
}

func (f *fakeReceiver) AbandonMessage(_ context.Context, m *azservicebus.ReceivedMessage, _ *azservicebus.AbandonMessageOptions) error {
	f.note("abandon " + m.MessageID)
	return nil
}

func (f *fakeReceiver) DeadLetterMessage(_ context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.DeadLetterOptions) error {
	f.note("deadletter " + m.MessageID + " " + *o.Reason + ": " + *o.ErrorDescription)
	return nil
}

func (f *fakeReceiver) Close(context.Context) error { return nil }

// TestServiceBusSettles: a message applied is completed, one moved aside
// is dead-lettered by Service Bus with the error, and one in hand when
// the consumer stops is abandoned. No Service Bus server runs here (its
// emulator is a container image and needs a Docker engine), so the
// receiver is a fake.
func TestServiceBusSettles(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := &Env{
		Log:    slog.New(slog.DiscardHandler),
		Reject: func(err error) *DeadLetter { return &DeadLetter{Err: err} },
		Apply: func(ctx context.Context, method string, data []byte) error {
			cmd, err := Decode(method, data)
			if err != nil {
				return &DeadLetter{Err: err}
			}
			switch method = cmd.Method; method {
			case "publish":
				return nil
			case "stop":
				cancel()
				return ctx.Err()
			}
			return &DeadLetter{Err: errors.New("unknown method " + method)}
		},
	}
	msg := func(id, method string) *azservicebus.ReceivedMessage {
		return &azservicebus.ReceivedMessage{MessageID: id, Body: []byte(`{}`), ApplicationProperties: map[string]any{"centrifugo-method": method}}
	}
	s, err := NewAzureServiceBusSource(AzureServiceBusConfig{ConnectionString: "x", Queues: []string{"q"}})
	if err != nil {
		t.Fatal(err)
	}
	r := &fakeReceiver{}
	bad := &azservicebus.ReceivedMessage{MessageID: "3", Body: []byte(`not json`)}
	s.applyAll(ctx, env, r, "q", []*azservicebus.ReceivedMessage{msg("1", "publish"), msg("2", "nope"), bad, msg("4", "stop")})
	want := []string{
		"complete 1",
		"deadletter 2 herald: unknown method nope",
		"deadletter 3 herald: malformed message: not a {\"method\",\"payload\"} JSON object: invalid character 'o' in literal null (expecting 'u')",
		"abandon 4",
	}
	if len(r.settled) != len(want) {
		t.Fatalf("settled %q, want %q", r.settled, want)
	}
	for i := range want {
		if r.settled[i] != want[i] {
			t.Fatalf("settled %q, want %q", r.settled, want)
		}
	}
}
