package hub_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// controlCounter is the memory engine, counting the control messages the
// hub addresses to one node: what an emulation request costs the cluster.
type controlCounter struct {
	*memory.Engine
	targeted atomic.Int64
}

func (e *controlCounter) PublishControl(ctx context.Context, data []byte, node string) error {
	if node != "" {
		e.targeted.Add(1)
	}
	return e.Engine.PublishControl(ctx, data, node)
}

// ghost is another node as this hub knows it from a heartbeat: its id and
// the session key it announced.
type ghost struct {
	id  string
	key []byte
}

// announceGhost makes the hub of n know a live node that no engine holds:
// a heartbeat with a session key, sent through n's engine.
func announceGhost(t *testing.T, n *node, e *controlCounter) ghost {
	t.Helper()
	g := ghost{id: "ghost-" + rand.Text()[:6], key: make([]byte, 32)}
	_, _ = rand.Read(g.key)
	beat, _ := json.Marshal(map[string]any{
		"from": g.id,
		"node": map[string]any{"uid": g.id, "name": "ghost", "session_key": g.key},
	})
	if err := e.Engine.PublishControl(t.Context(), beat, ""); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the ghost node known", 5*time.Second, func() bool { return len(n.hub.Nodes()) == 2 })
	return g
}

// session makes a session id as the ghost node would: random bytes and
// their MAC, bound to the node id, under its session key.
func (g ghost) session() string {
	b := make([]byte, 16, 32)
	_, _ = rand.Read(b)
	m := hmac.New(sha256.New, g.key)
	m.Write([]byte(g.id))
	m.Write([]byte{0})
	m.Write(b)
	return base64.RawURLEncoding.EncodeToString(append(b, m.Sum(nil)[:16]...))
}

// tamper changes one character in the middle of a session.
func tamper(s string) string {
	c := byte('A')
	if s[10] == c {
		c = 'B'
	}
	return s[:10] + string(c) + s[11:]
}

func startGateNode(t *testing.T, limits hub.EmulationLimits) (*node, *controlCounter) {
	t.Helper()
	e := &controlCounter{Engine: memory.New(memory.Config{})}
	n := startNodeMem(t, hub.Config{Engine: e, Emulation: limits})
	return n, e
}

// TestEmulationForgedSession: a session that the named node did not make
// is refused on the node that got the request, without an engine call.
func TestEmulationForgedSession(t *testing.T) {
	t.Parallel()
	n, e := startGateNode(t, hub.EmulationLimits{})
	g := announceGhost(t, n, e)
	ctx := context.Background()
	forged := []string{
		"",
		"s-1",
		strings.Repeat("A", 43),
		n.hub.NewSession(), // made by this node, not by the ghost
		tamper(g.session()),
	}
	for _, s := range forged {
		err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: g.id, Session: s, Data: []byte(`{}`)})
		if !errors.Is(err, hub.ErrUnknownSession) {
			t.Errorf("forged session %q for the ghost node: %v, want ErrUnknownSession", s, err)
		}
	}
	if got := e.targeted.Load(); got != 0 {
		t.Fatalf("%d control messages sent for forged sessions, want 0", got)
	}
	// A session the ghost made goes to the ghost, and to it alone.
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: g.id, Session: g.session(), Data: []byte(`{"id":1}`)}); err != nil {
		t.Fatalf("the ghost's own session: %v", err)
	}
	if got := e.targeted.Load(); got != 1 {
		t.Fatalf("%d targeted control messages for one forwarded request, want 1", got)
	}
	// Too large to forward: refused here.
	big := []byte(`{"id":1,"rpc":{"data":"` + strings.Repeat("x", hub.MaxForwardedEmulation) + `"}}`)
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: g.id, Session: g.session(), Data: big}); !errors.Is(err, hub.ErrEmulationTooLarge) {
		t.Fatalf("oversized forward: %v, want ErrEmulationTooLarge", err)
	}
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: "no-such-node", Session: g.session(), Data: []byte(`{}`)}); !errors.Is(err, hub.ErrUnknownNode) {
		t.Fatalf("unknown node: %v, want ErrUnknownNode", err)
	}
	if got := e.targeted.Load(); got != 1 {
		t.Fatalf("%d targeted control messages, want still 1", got)
	}
}

// TestEmulationRateLimits: requests over the per-session and per-address
// rates are refused before anything is forwarded.
func TestEmulationRateLimits(t *testing.T) {
	t.Parallel()
	n, e := startGateNode(t, hub.EmulationLimits{PerSession: 0.001, PerSessionBurst: 2, PerAddress: 0.001, PerAddressBurst: 5})
	g := announceGhost(t, n, e)
	ctx := context.Background()
	s := g.session()
	for i := range 2 {
		if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: g.id, Session: s, Data: []byte(`{}`), Addr: "192.0.2.1"}); err != nil {
			t.Fatalf("request %d within the session's burst: %v", i, err)
		}
	}
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: g.id, Session: s, Data: []byte(`{}`), Addr: "192.0.2.1"}); !errors.Is(err, hub.ErrEmulationRateLimited) {
		t.Fatalf("request over the session's burst: %v, want ErrEmulationRateLimited", err)
	}
	// The address has 2 left of its 5 (three requests above, the refused
	// one included): forged sessions use them up too.
	for i := range 2 {
		if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: g.id, Session: "forged", Data: []byte(`{}`), Addr: "192.0.2.1"}); !errors.Is(err, hub.ErrUnknownSession) {
			t.Fatalf("forged request %d within the address's burst: %v", i, err)
		}
	}
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: g.id, Session: g.session(), Data: []byte(`{}`), Addr: "192.0.2.1"}); !errors.Is(err, hub.ErrEmulationRateLimited) {
		t.Fatalf("request over the address's burst: %v, want ErrEmulationRateLimited", err)
	}
	// Another address is not limited by this one.
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: g.id, Session: g.session(), Data: []byte(`{}`), Addr: "192.0.2.2"}); err != nil {
		t.Fatalf("another address: %v", err)
	}
	if got := e.targeted.Load(); got != 3 {
		t.Fatalf("%d requests forwarded, want 3", got)
	}
}

// FuzzEmulationSession feeds HandleEmulation arbitrary node names, sessions
// and commands: nothing may panic, and nothing the fuzzer makes up may be
// forwarded to another node (only a session its node made is).
func FuzzEmulationSession(f *testing.F) {
	e := &controlCounter{Engine: memory.New(memory.Config{})}
	h := hubtest.Start(f, hub.Config{Engine: e, Logger: testLogger(), Emulation: hub.EmulationLimits{PerAddress: -1, PerSession: -1}})
	key := make([]byte, 32)
	g := ghost{id: "ghost", key: key}
	beat, _ := json.Marshal(map[string]any{"from": g.id, "node": map[string]any{"uid": g.id, "session_key": key}})
	if err := e.Engine.PublishControl(context.Background(), beat, ""); err != nil {
		f.Fatal(err)
	}
	f.Add("ghost", g.session()[:20]+strings.Repeat("A", 23), []byte(`{"id":1}`))
	f.Add("ghost", strings.Repeat("-", 43), []byte("\x00"))
	f.Add("", h.NewSession(), []byte(`{"id":1,"ping":{}}`))
	f.Add(h.NodeID(), "x", []byte(nil))
	f.Fuzz(func(t *testing.T, node, session string, data []byte) {
		before := e.targeted.Load()
		_ = h.HandleEmulation(context.Background(), hub.EmulationRequest{Node: node, Session: session, Data: data})
		if e.targeted.Load() != before {
			t.Fatalf("node %q session %q: forwarded a session its node did not make", node, session)
		}
	})
}
