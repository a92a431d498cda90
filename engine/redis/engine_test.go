package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

func TestOptionsValidation(t *testing.T) {
	for name, o := range map[string]Config{
		"no address":         {},
		"sentinel+cluster":   {Addrs: []string{"a:1"}, SentinelMaster: "m", Cluster: true},
		"prefix with braces": {Addrs: []string{"a:1"}, Prefix: "he{r}ald"},
		"prefix with glob":   {Addrs: []string{"a:1"}, Prefix: "her*"},
		"node id with space": {Addrs: []string{"a:1"}, NodeID: "a b"},
		"replicas+cluster":   {Addrs: []string{"a:1"}, Cluster: true, MinReplicas: 1},
		"replicas+seeds":     {Addrs: []string{"a:1", "b:1"}, MinReplicas: 1},
	} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	o, err := Config{Addrs: []string{"a:1"}}.withDefaults()
	if err != nil || o.Prefix != DefaultPrefix || o.PubSubShards != DefaultPubSubShards || o.NodeID == "" {
		t.Errorf("defaults: %+v, %v", o, err)
	}
}

func TestNotStarted(t *testing.T) {
	e := newTestEngine(t, testOptions(t))
	ctx := t.Context()
	if err := e.Subscribe(ctx, "x"); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Subscribe before Start: %v", err)
	}
	if _, err := e.Publish(ctx, "x", &engine.Publication{}, engine.PublishOptions{}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Publish before Start: %v", err)
	}
	// Reads need no delivery.
	if _, _, err := e.History(ctx, "x", engine.HistoryRequest{}); err != nil {
		t.Errorf("History before Start: %v", err)
	}
}

func TestUnsubscribeStopsDelivery(t *testing.T) {
	rec := enginetest.NewRecorder()
	e := startEngine(t, testOptions(t), rec)
	a := "unsub_a_" + randomToken(3)
	// b shares a's connection, so its delivery comes after a's would have.
	b := "unsub_b_" + randomToken(3)
	for e.subscriberOf(b) != e.subscriberOf(a) {
		b = "unsub_b_" + randomToken(3)
	}
	for _, ch := range []string{a, b} {
		if err := e.Subscribe(t.Context(), ch); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Unsubscribe(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	publishHistory(t, e, a, "1", 10)
	publishHistory(t, e, b, "1", 10)
	rec.WaitForPublications(t, b, 1, 10*time.Second)
	if n := len(rec.Publications(a)); n != 0 {
		t.Errorf("%d deliveries on an unsubscribed channel", n)
	}
	// Subscribing again resumes delivery.
	if err := e.Subscribe(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	publishHistory(t, e, a, "2", 10)
	got := rec.WaitForPublications(t, a, 1, 10*time.Second)
	if got[0].Pub.Offset != 2 {
		t.Errorf("after resubscribing got offset %d first, want 2", got[0].Pub.Offset)
	}
}

// TestStandalonePresence checks that Presence shares the engine's
// presence and closes on its own.
func TestStandalonePresence(t *testing.T) {
	opts := testOptions(t)
	e := newTestEngine(t, opts)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	p, err := NewPresence(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	ch := "presence_" + randomToken(3)
	info := &engine.ClientInfo{User: "u", Client: "c", ConnInfo: []byte(`{}`)}
	if err := p.AddPresence(ctx, ch, info, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := e.Presence(ctx, ch)
	if err != nil || len(got) != 1 || got["c"] == nil || got["c"].User != "u" {
		t.Fatalf("engine sees %v, %v", got, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.AddPresence(ctx, ch, info, time.Minute); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("AddPresence after Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCollectors(t *testing.T) {
	e := newTestEngine(t, testOptions(t))
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e.Collectors()...)
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 7 {
		t.Errorf("gathered %d metrics, %v", n, err)
	}
}
