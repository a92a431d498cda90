// Package enginetest is the conformance suite every engine.Engine passes.
//
// An engine's test calls Run with a constructor. The suite assumes nothing
// about timing: engines may deliver asynchronously over a network, so every
// test awaits the events it expects with a timeout, and every test uses
// channel names of its own, so engines may share one server between tests
// and between concurrently running packages.
//
// What the suite requires beyond the engine package's doc comments:
//   - Subscribe returns only once publications on the channel will reach the
//     node's handler.
//   - Publish, PublishJoin, PublishLeave and PublishControl return only once
//     the message is accepted, so calls made one after another by one
//     goroutine are delivered in that order.
//   - PublishControl with a node id reaches that node alone (the node
//     whose NodeID it is), and with none every node; NodeID is not empty
//     and differs between the nodes of a cluster.
//   - Close may be called more than once; calls after the first may return
//     nil or an error wrapping engine.ErrClosed.
package enginetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// Capabilities says which optional parts of the contract an engine
// provides; the suite skips the tests of the parts it lacks.
type Capabilities struct {
	// History: streams, offsets, epochs and History/RemoveHistory.
	History bool
	// Presence: the PresenceManager methods.
	Presence bool
	// Cluster: engines returned by separate newEngine calls within one test
	// are nodes of one cluster, sharing deliveries, history and presence.
	// The memory engine is not; networked engines are.
	Cluster bool
	// Faulty, when set, makes two new, not yet started nodes of one
	// cluster and breakConn, which breaks the connection b receives
	// publications on, as a network failure would: the suite's Reconnect
	// test publishes through a while it breaks b's connection. breakConn
	// runs on the test's goroutine once both nodes are started; it fails
	// the test if there was nothing to break, and returns once b has
	// re-established the connection and its subscriptions. The suite
	// starts and closes both nodes. Engines without a connection (memory)
	// leave it nil and the test is skipped.
	Faulty func(t *testing.T) (a, b engine.Engine, breakConn func())
	// Idempotency: Publish honours PublishOptions.IdempotencyKey (engines
	// without it return engine.ErrIdempotencyUnsupported, which the suite
	// checks instead).
	Idempotency bool
	// Maps: the engine keeps map state (engine.MapsOf).
	Maps bool
	// Store: the engine keeps a Store (engine.StoreOf).
	Store bool
	// ChannelStates: the engine keeps channel occupancy and makes channel
	// state events (engine.ChannelStatesOf).
	ChannelStates bool
}

const (
	// eventTimeout bounds the wait for any one expected event. It is long
	// so that a loaded CI machine running the race detector does not flake;
	// passing tests never wait for it.
	eventTimeout = 10 * time.Second
	// callTimeout bounds each engine call.
	callTimeout = 10 * time.Second
)

// suite carries Run's arguments to the tests.
type suite struct {
	newEngine func(t *testing.T) engine.Engine
	caps      Capabilities
}

// Run runs the conformance suite as subtests of t. newEngine returns a new,
// not yet started engine; the suite starts it with its own handler and
// closes it when the test ends.
func Run(t *testing.T, newEngine func(t *testing.T) engine.Engine, caps Capabilities) {
	s := &suite{newEngine: newEngine, caps: caps}
	t.Run("Delivery", s.delivery)
	t.Run("History", func(t *testing.T) {
		if !caps.History {
			t.Skip("engine has no history")
		}
		s.history(t)
	})
	t.Run("SubscribePosition", func(t *testing.T) {
		if !caps.History {
			t.Skip("engine has no history")
		}
		s.subscribePosition(t)
	})
	t.Run("Presence", func(t *testing.T) {
		if !caps.Presence {
			t.Skip("engine has no presence")
		}
		s.presence(t)
	})
	t.Run("Cluster", func(t *testing.T) {
		if !caps.Cluster {
			t.Skip("engine is single-node")
		}
		s.cluster(t)
	})
	t.Run("Idempotency", func(t *testing.T) {
		if !caps.Idempotency {
			s.testIdempotencyUnsupported(t)
			return
		}
		s.idempotency(t)
	})
	t.Run("Maps", func(t *testing.T) {
		if !caps.Maps {
			t.Skip("engine keeps no map state")
		}
		s.maps(t)
	})
	t.Run("Store", func(t *testing.T) {
		if !caps.Store {
			t.Skip("engine keeps no store")
		}
		s.store(t)
	})
	t.Run("ChannelStates", func(t *testing.T) {
		if !caps.ChannelStates {
			t.Skip("engine keeps no channel occupancy")
		}
		s.channelStates(t) // channelstate.go
	})
	t.Run("Lifecycle", s.lifecycle)
	t.Run("Reconnect", func(t *testing.T) {
		if caps.Faulty == nil {
			t.Skip("engine has no connection to break (Capabilities.Faulty is nil)")
		}
		s.reconnect(t)
	})
}

// node is a started engine and the handler it delivers to.
type node struct {
	engine.Engine
	rec *recorder
}

// start makes and starts an engine that is closed when t ends.
func (s *suite) start(t *testing.T) *node {
	t.Helper()
	e := s.newEngine(t)
	closeAtEnd(t, e)
	return startNode(t, e)
}

// closeAtEnd closes e when t ends.
func closeAtEnd(t *testing.T, e engine.Engine) {
	t.Cleanup(func() {
		if err := e.Close(); err != nil && !errors.Is(err, engine.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
}

// startNode starts e with a new recorder.
func startNode(t *testing.T, e engine.Engine) *node {
	t.Helper()
	rec := newRecorder()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	if err := e.Start(ctx, rec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return &node{Engine: e, rec: rec}
}

// ctx is the context for one test's engine calls.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), callTimeout)
	t.Cleanup(cancel)
	return c
}

// channel returns a channel name no other test, run or process uses. It is
// made of letters, digits, '_' and '-' only, which every engine must carry.
func channel(t *testing.T, suffix string) string {
	t.Helper()
	name := t.Name()
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			return r
		}
		return '_'
	}, name)
	if len(name) > 32 {
		name = name[:32]
	}
	return "enginetest_" + name + "_" + randomHex(6) + "_" + suffix
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails since Go 1.24
	return hex.EncodeToString(b)
}

// subscribe subscribes n to channels and fails the test on error.
func (n *node) subscribe(t *testing.T, channels ...string) {
	t.Helper()
	for _, ch := range channels {
		if err := n.Subscribe(ctx(t), ch); err != nil {
			t.Fatalf("Subscribe(%q): %v", ch, err)
		}
	}
}

// publish publishes data and fails the test on error.
func (n *node) publish(t *testing.T, ch string, data []byte, opts engine.PublishOptions) engine.StreamPosition {
	t.Helper()
	sp, err := n.Publish(ctx(t), ch, &engine.Publication{Data: data}, opts)
	if err != nil {
		t.Fatalf("Publish(%q): %v", ch, err)
	}
	return sp
}

// history reads ch and fails the test on error.
func (n *node) history(t *testing.T, ch string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition) {
	t.Helper()
	pubs, sp, err := n.History(ctx(t), ch, req)
	if err != nil {
		t.Fatalf("History(%q, %+v): %v", ch, req, err)
	}
	return pubs, sp
}

// withHistory keeps publications for a minute, up to size of them.
func withHistory(size int) engine.PublishOptions {
	return engine.PublishOptions{HistorySize: size, HistoryTTL: time.Minute}
}
