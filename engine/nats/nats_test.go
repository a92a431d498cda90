package nats

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestConformance runs the shared suite over NATS alone: delivery,
// join/leave, control, the cluster tests and reconnects; no history, no
// presence.
func TestConformance(t *testing.T) {
	opts := testOptions(t)
	enginetest.Run(t, newSuiteEngine(opts), enginetest.Capabilities{Cluster: true, Faulty: faultyNodes(opts)})
}

// TestConformanceWithRedisPresence runs the suite over NATS paired with
// Redis presence, the pairing docs/engines.md recommends.
func TestConformanceWithRedisPresence(t *testing.T) {
	opts := testOptions(t)
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	// Presence keys expire with their entries, so the test leaves
	// nothing behind for long.
	p, err := redis.NewPresence(ctx, redis.Config{Addrs: []string{addr}, Prefix: opts.Prefix})
	if err != nil {
		t.Fatalf("redis.NewPresence: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	opts.Presence = p
	enginetest.Run(t, newSuiteEngine(opts), enginetest.Capabilities{Presence: true, Cluster: true, Faulty: faultyNodes(opts)})
}

func newSuiteEngine(opts Config) func(t *testing.T) engine.Engine {
	return func(t *testing.T) engine.Engine { return newSuiteNode(t, opts) }
}

// faultyNodes makes the suite's Reconnect test's nodes: the subscribing
// one connects through a proxy that its fault cuts.
func faultyNodes(opts Config) func(t *testing.T) (engine.Engine, engine.Engine, func()) {
	return func(t *testing.T) (engine.Engine, engine.Engine, func()) {
		bOpts, px := proxiedOptions(t, opts)
		a, b := newSuiteNode(t, opts), newSuiteNode(t, bOpts)
		return a, b, func() { cutConnection(t, b, px) }
	}
}

// newSuiteNode makes a node, not yet started, with an id of its own.
func newSuiteNode(t *testing.T, opts Config) *Engine {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	opts.NodeID = ""
	e, err := New(ctx, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// TestNoHistory checks that everything history needs fails clearly.
func TestNoHistory(t *testing.T) {
	e := startEngine(t, testOptions(t), enginetest.NewRecorder())
	ctx := t.Context()
	if _, err := e.Publish(ctx, "a", &engine.Publication{}, engine.PublishOptions{HistorySize: 1, HistoryTTL: time.Second}); !errors.Is(err, ErrNoHistory) {
		t.Errorf("Publish with history: %v", err)
	}
	if _, _, err := e.History(ctx, "a", engine.HistoryRequest{}); !errors.Is(err, ErrNoHistory) {
		t.Errorf("History: %v", err)
	}
	if err := e.RemoveHistory(ctx, "a"); !errors.Is(err, ErrNoHistory) {
		t.Errorf("RemoveHistory: %v", err)
	}
	if _, err := e.Presence(ctx, "a"); !errors.Is(err, ErrNoPresence) {
		t.Errorf("Presence without a store: %v", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	for name, o := range map[string]Config{
		"no URL":          {},
		"wildcard prefix": {URL: "nats://x", Prefix: "a.*"},
		"empty token":     {URL: "nats://x", Prefix: "a..b"},
		"space in prefix": {URL: "nats://x", Prefix: "a b"},
		"trailing dot":    {URL: "nats://x", Prefix: "a."},
	} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestChannelNamesNeedingEscapes checks channels whose names are not
// valid subject tokens, and that escaping keeps them apart.
func TestChannelNamesNeedingEscapes(t *testing.T) {
	rec := enginetest.NewRecorder()
	e := startEngine(t, testOptions(t), rec)
	names := []string{"a.b", "a%2Eb", "room:*", "x>y", "with space", "ns:chan#1,2", "$private"}
	for _, ch := range names {
		if err := e.Subscribe(t.Context(), ch); err != nil {
			t.Fatalf("Subscribe(%q): %v", ch, err)
		}
	}
	for _, ch := range names {
		if _, err := e.Publish(t.Context(), ch, &engine.Publication{Data: []byte(ch)}, engine.PublishOptions{}); err != nil {
			t.Fatalf("Publish(%q): %v", ch, err)
		}
	}
	for _, ch := range names {
		if got := rec.WaitForPublications(t, ch, 1, 10*time.Second); len(got) != 1 || string(got[0].Pub.Data) != ch {
			t.Errorf("%q got %d deliveries, first %q", ch, len(got), got[0].Pub.Data)
		}
	}
}

func TestCollectors(t *testing.T) {
	e := startEngine(t, testOptions(t), enginetest.NewRecorder())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e.Collectors()...)
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 4 {
		t.Errorf("gathered %d metrics, %v", n, err)
	}
}
