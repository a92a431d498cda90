package stateoutput_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/stateoutput"
)

// natsSubject is a subject of the test's own.
func natsSubject() string {
	return "herald.test.state." + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// natsConn connects to url until t ends.
func natsConn(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// natsEvent reads an event message: its body and its Nats-Msg-Id.
func natsEvent(t *testing.T, m *nats.Msg) stateoutput.Event {
	t.Helper()
	var e struct {
		Channel string `json:"channel"`
		Type    string `json:"type"`
		TimeMs  int64  `json:"time_ms"`
	}
	if err := json.Unmarshal(m.Data, &e); err != nil {
		t.Fatalf("%s: %v", m.Data, err)
	}
	ev := stateoutput.Event{Channel: e.Channel, Type: e.Type, TimeMs: e.TimeMs}
	if id, want := m.Header.Get("Nats-Msg-Id"), e.Channel+":"+e.Type+":"+strconv.FormatInt(e.TimeMs, 10); id != want {
		t.Errorf("Nats-Msg-Id %q, want %q", id, want)
	}
	return ev
}

// TestNATSOutput: each event of a batch is a message on the subject, in
// order, as JSON with the Nats-Msg-Id header.
func TestNATSOutput(t *testing.T) {
	url := testenv.Require(t, "HERALD_TEST_NATS_URL")
	subject := natsSubject()
	nc := natsConn(t, url)
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	out, err := stateoutput.NewNATSOutput(t.Context(), stateoutput.NATSConfig{URL: url, Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := out.Write(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	for i, want := range batch {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got := natsEvent(t, m); got != want {
			t.Fatalf("event %d: %v, want %v", i, got, want)
		}
	}
}

// TestNATSOutputJetStream: through JetStream a batch written twice is
// stored once, in order, by the stream's duplicate window.
func TestNATSOutputJetStream(t *testing.T) {
	// The shared test server runs without JetStream: one of the test's
	// own.
	testenv.Require(t, "HERALD_TEST_NATS_URL")
	port := testenv.FreePort(t)
	testenv.StartProcess(t, exec.Command(testenv.Binary(t, "nats-server"), "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", t.TempDir())).
		WaitListening(t, port, 10*time.Second)
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	subject := natsSubject()
	nc := natsConn(t, url)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.ReplaceAll(subject, ".", "_")
	stream, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Duplicates: time.Minute, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = js.DeleteStream(context.Background(), name) })
	out, err := stateoutput.NewNATSOutput(t.Context(), stateoutput.NATSConfig{URL: url, Subject: subject, JetStream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	for range 2 {
		if err := out.Write(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
	}
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(len(batch)) {
		t.Fatalf("stream holds %d messages, want %d", info.State.Msgs, len(batch))
	}
	for i, want := range batch {
		m, err := stream.GetMsg(t.Context(), uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if got := natsEvent(t, &nats.Msg{Data: m.Data, Header: m.Header}); got != want {
			t.Fatalf("message %d: %v, want %v", i+1, got, want)
		}
	}
	// A subject no stream captures fails the batch, for the hub to retry.
	other, err := stateoutput.NewNATSOutput(t.Context(), stateoutput.NATSConfig{URL: url, Subject: subject + ".none", JetStream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := other.Write(ctx, batch); err == nil {
		t.Fatal("a write no stream stores succeeded")
	}
}

// TestNATSMessageDocumented: docs/proxy.md shows a message as the output
// writes it.
func TestNATSMessageDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := stateoutput.MarshalEvent(stateoutput.Event{Channel: "chat:index", Type: "occupied", TimeMs: 1697206286533})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```json\n"+string(want)+"\n```") {
		t.Fatalf("docs/proxy.md does not show the message %s", want)
	}
}
