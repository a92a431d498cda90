package hub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
)

// nextTrace waits for the trace's next event.
func nextTrace(t *testing.T, tr *hub.Trace) hub.TraceEvent {
	t.Helper()
	select {
	case e := <-tr.Events():
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no trace event within 5s")
		return hub.TraceEvent{}
	}
}

func traceNode(t *testing.T) *node {
	return startNode(t, hub.Config{Channels: hub.ChannelConfig{
		WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true},
	}})
}

// TestTraceUser: a user trace sees the user's connect, subscribe, a
// publication delivered to it, unsubscribe and disconnect, and nothing of
// another user.
func TestTraceUser(t *testing.T) {
	t.Parallel()
	n := traceNode(t)
	tr, err := n.hub.Trace(hub.TraceUser, "alice", 64)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	other := n.dial(t)
	other.Connect("bob")
	other.MustSubscribe(1, "news", "")
	c := n.dial(t)
	c.Connect("alice")
	if e := nextTrace(t, tr); e.Type != hub.TraceConnect || e.User != "alice" || e.Client == "" || e.Node == "" || e.Time == 0 {
		t.Fatalf("connect event %+v", e)
	}
	c.MustSubscribe(1, "news", "")
	if e := nextTrace(t, tr); e.Type != hub.TraceSubscribe || e.Channel != "news" {
		t.Fatalf("subscribe event %+v", e)
	}
	if _, err := n.hub.Publish(context.Background(), "news", []byte(`{"x":1}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	e := nextTrace(t, tr)
	if e.Type != hub.TracePublication || e.Channel != "news" || string(e.Data) != `{"x":1}` || e.User != "alice" {
		t.Fatalf("publication event %+v", e)
	}
	c.Send(`{"id":2,"unsubscribe":{"channel":"news"}}`)
	if e := nextTrace(t, tr); e.Type != hub.TraceUnsubscribe || e.Channel != "news" {
		t.Fatalf("unsubscribe event %+v", e)
	}
	c.Drop()
	if e := nextTrace(t, tr); e.Type != hub.TraceDisconnect || e.User != "alice" {
		t.Fatalf("disconnect event %+v", e)
	}
	select {
	case e := <-tr.Events():
		t.Fatalf("unexpected event %+v", e)
	default:
	}
}

// TestTraceChannel: a channel trace sees subscribers come and go and its
// publications; a server unsubscribe carries its code.
func TestTraceChannel(t *testing.T) {
	t.Parallel()
	n := traceNode(t)
	tr, err := n.hub.Trace(hub.TraceChannel, "room", 64)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	c := n.dial(t)
	c.Connect("carol")
	c.MustSubscribe(1, "elsewhere", "")
	c.MustSubscribe(2, "room", "")
	if e := nextTrace(t, tr); e.Type != hub.TraceSubscribe || e.User != "carol" || e.Channel != "room" {
		t.Fatalf("subscribe event %+v", e)
	}
	if _, err := n.hub.Publish(context.Background(), "room", []byte(`"hi"`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if e := nextTrace(t, tr); e.Type != hub.TracePublication || string(e.Data) != `"hi"` {
		t.Fatalf("publication event %+v", e)
	}
	if err := n.hub.UnsubscribeUser(context.Background(), "carol", "room", ""); err != nil {
		t.Fatal(err)
	}
	if e := nextTrace(t, tr); e.Type != hub.TraceUnsubscribe || e.Code != 2000 {
		t.Fatalf("unsubscribe event %+v", e)
	}
}

// TestTraceBounds: a full buffer drops and counts rather than blocks, and
// at most MaxTraces are open.
func TestTraceBounds(t *testing.T) {
	t.Parallel()
	n := traceNode(t)
	tr, err := n.hub.Trace(hub.TraceChannel, "busy", 1)
	if err != nil {
		t.Fatal(err)
	}
	// The subscribe event takes the trace's only room: the three
	// publications after it are dropped.
	c := n.dial(t)
	c.Connect("dave")
	c.MustSubscribe(1, "busy", "")
	for range 3 {
		if _, err := n.hub.Publish(context.Background(), "busy", []byte(`1`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.ReadMsgs(3)
	if tr.Dropped() != 3 {
		t.Fatalf("dropped %d, want 3", tr.Dropped())
	}
	tr.Close()
	tr.Close() // twice is harmless

	open := make([]*hub.Trace, 0, hub.MaxTraces)
	t.Cleanup(func() {
		for _, o := range open {
			o.Close()
		}
	})
	for range hub.MaxTraces {
		o, err := n.hub.Trace(hub.TraceUser, "u", 1)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, o)
	}
	if _, err := n.hub.Trace(hub.TraceUser, "u", 1); !errors.Is(err, hub.ErrTooManyTraces) {
		t.Fatalf("trace past the limit: %v", err)
	}
	if _, err := n.hub.Trace("node", "x", 1); err == nil {
		t.Fatal("an unknown kind must be refused")
	}
}
