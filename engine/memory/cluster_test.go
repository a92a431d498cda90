package memory

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

// TestConformanceCluster runs the suite's cluster tests against nodes that
// share one memory engine, which fans deliveries out to every node. It
// checks the suite itself: no networked engine exists in this package.
func TestConformanceCluster(t *testing.T) {
	var mu sync.Mutex
	clusters := map[*testing.T]*fanout{}
	enginetest.Run(t, func(t *testing.T) engine.Engine {
		mu.Lock()
		defer mu.Unlock()
		f := clusters[t]
		if f == nil {
			f = &fanout{}
			f.shared = New(Config{JanitorInterval: 50 * time.Millisecond})
			if err := f.shared.Start(context.Background(), f); err != nil {
				t.Fatalf("start shared engine: %v", err)
			}
			t.Cleanup(func() { _ = f.shared.Close() })
			clusters[t] = f
		}
		f.nodes++
		return &clusterNode{Engine: f.shared, fan: f, id: fmt.Sprintf("node-%d", f.nodes)}
	}, enginetest.Capabilities{History: true, Presence: true, Cluster: true, Idempotency: true})
}

// fanout delivers what the shared engine delivers to every node's handler.
type fanout struct {
	shared   *Engine
	nodes    int // node ids handed out, under the suite's lock
	mu       sync.RWMutex
	handlers []engine.Handler
	ids      []string // node id of handlers[i]
}

// deliverControl hands a control message to the node with id alone.
func (f *fanout) deliverControl(id string, d []byte) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for i, h := range f.handlers {
		if f.ids[i] == id {
			h.HandleControl(d)
		}
	}
}

func (f *fanout) each(fn func(engine.Handler)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, h := range f.handlers {
		fn(h)
	}
}

func (f *fanout) HandlePublication(ch string, p *engine.Publication, sp engine.StreamPosition) {
	f.each(func(h engine.Handler) { h.HandlePublication(ch, p, sp) })
}
func (f *fanout) HandleJoin(ch string, i *engine.ClientInfo) {
	f.each(func(h engine.Handler) { h.HandleJoin(ch, i) })
}
func (f *fanout) HandleLeave(ch string, i *engine.ClientInfo) {
	f.each(func(h engine.Handler) { h.HandleLeave(ch, i) })
}
func (f *fanout) HandleControl(d []byte) { f.each(func(h engine.Handler) { h.HandleControl(d) }) }

// clusterNode is one node: the shared engine, with its own handler and its
// own closed state.
type clusterNode struct {
	engine.Engine
	fan    *fanout
	id     string
	h      engine.Handler
	closed atomic.Bool
}

func (n *clusterNode) NodeID() string { return n.id }

func (n *clusterNode) Start(_ context.Context, h engine.Handler) error {
	n.fan.mu.Lock()
	defer n.fan.mu.Unlock()
	n.h = h
	n.fan.handlers = append(n.fan.handlers, h)
	n.fan.ids = append(n.fan.ids, n.id)
	return nil
}

func (n *clusterNode) Close() error {
	if n.closed.Swap(true) {
		return nil
	}
	n.fan.mu.Lock()
	defer n.fan.mu.Unlock()
	for i, h := range n.fan.handlers {
		if h == n.h {
			n.fan.handlers = append(n.fan.handlers[:i], n.fan.handlers[i+1:]...)
			n.fan.ids = append(n.fan.ids[:i], n.fan.ids[i+1:]...)
			break
		}
	}
	return nil
}

func (n *clusterNode) check(op string) error {
	if n.closed.Load() {
		return fmt.Errorf("%s: %w", op, engine.ErrClosed)
	}
	return nil
}

func (n *clusterNode) Publish(ctx context.Context, ch string, p *engine.Publication, o engine.PublishOptions) (engine.StreamPosition, error) {
	if err := n.check("publish"); err != nil {
		return engine.StreamPosition{}, err
	}
	return n.Engine.Publish(ctx, ch, p, o)
}

func (n *clusterNode) PublishJoin(ctx context.Context, ch string, i *engine.ClientInfo) error {
	if err := n.check("join"); err != nil {
		return err
	}
	return n.Engine.PublishJoin(ctx, ch, i)
}

func (n *clusterNode) PublishLeave(ctx context.Context, ch string, i *engine.ClientInfo) error {
	if err := n.check("leave"); err != nil {
		return err
	}
	return n.Engine.PublishLeave(ctx, ch, i)
}

func (n *clusterNode) PublishControl(ctx context.Context, d []byte, node string) error {
	if err := n.check("control"); err != nil {
		return err
	}
	if node != "" {
		n.fan.deliverControl(node, d)
		return nil
	}
	return n.Engine.PublishControl(ctx, d, "")
}

func (n *clusterNode) Subscribe(ctx context.Context, ch string) error {
	if err := n.check("subscribe"); err != nil {
		return err
	}
	return n.Engine.Subscribe(ctx, ch)
}

func (n *clusterNode) Unsubscribe(ctx context.Context, ch string) error {
	if err := n.check("unsubscribe"); err != nil {
		return err
	}
	return n.Engine.Unsubscribe(ctx, ch)
}

func (n *clusterNode) History(ctx context.Context, ch string, r engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	if err := n.check("history"); err != nil {
		return nil, engine.StreamPosition{}, err
	}
	return n.Engine.History(ctx, ch, r)
}

func (n *clusterNode) RemoveHistory(ctx context.Context, ch string) error {
	if err := n.check("remove history"); err != nil {
		return err
	}
	return n.Engine.RemoveHistory(ctx, ch)
}

func (n *clusterNode) AddPresence(ctx context.Context, ch string, i *engine.ClientInfo, ttl time.Duration) error {
	if err := n.check("add presence"); err != nil {
		return err
	}
	return n.Engine.AddPresence(ctx, ch, i, ttl)
}

func (n *clusterNode) RemovePresence(ctx context.Context, ch, id string) error {
	if err := n.check("remove presence"); err != nil {
		return err
	}
	return n.Engine.RemovePresence(ctx, ch, id)
}

func (n *clusterNode) Presence(ctx context.Context, ch string) (map[string]*engine.ClientInfo, error) {
	if err := n.check("presence"); err != nil {
		return nil, err
	}
	return n.Engine.Presence(ctx, ch)
}

func (n *clusterNode) PresenceStats(ctx context.Context, ch string) (engine.PresenceStats, error) {
	if err := n.check("presence stats"); err != nil {
		return engine.PresenceStats{}, err
	}
	return n.Engine.PresenceStats(ctx, ch)
}
