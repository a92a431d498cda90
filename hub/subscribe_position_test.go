package hub_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// countingEngine is the memory engine counting the calls a subscribe
// makes to it.
type countingEngine struct {
	*memory.Engine
	subscribes, positions, histories atomic.Int32
}

func (e *countingEngine) Subscribe(ctx context.Context, ch string) error {
	e.subscribes.Add(1)
	return e.Engine.Subscribe(ctx, ch)
}

func (e *countingEngine) SubscribePosition(ctx context.Context, ch string, metaTTL time.Duration) (engine.StreamPosition, error) {
	e.positions.Add(1)
	return e.Engine.SubscribePosition(ctx, ch, metaTTL)
}

func (e *countingEngine) History(ctx context.Context, ch string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	e.histories.Add(1)
	return e.Engine.History(ctx, ch, req)
}

// calls reports the counts as "subscribes/positions/histories" and
// resets them.
func (e *countingEngine) calls() [3]int32 {
	return [3]int32{e.subscribes.Swap(0), e.positions.Swap(0), e.histories.Swap(0)}
}

// plainEngine hides the memory engine's PositionSubscriber: an engine
// that subscribes and reads apart.
type plainEngine struct{ engine.Engine }

func positionedNamespace() hub.ChannelConfig {
	return hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("pos", hub.NamespaceOptions{AllowSubscribeForClient: true, ForcePositioning: true, AllowRecovery: true, HistorySize: 10, HistoryTTL: time.Minute}),
	}}
}

// TestSubscribePositionOneStep: the first subscriber of a channel on a
// node gets the position the engine read as it subscribed, without a
// History read of its own (one round trip on a networked engine, not
// two); a later subscriber, with the channel subscribed already, reads it.
func TestSubscribePositionOneStep(t *testing.T) {
	t.Parallel()
	eng := &countingEngine{Engine: memory.New(memory.Config{})}
	n := startNode(t, hub.Config{Engine: eng, Channels: positionedNamespace()})
	top := publishN(t, n.hub, "pos:a", 3)
	eng.calls()

	c1 := n.dial(t)
	c1.Connect("u")
	res := c1.MustSubscribe(2, "pos:a", "")
	if res["epoch"] != top.Epoch || res["offset"] != float64(top.Offset) {
		t.Fatalf("first subscriber's reply %v, the stream is at %+v", res, top)
	}
	if got := eng.calls(); got != [3]int32{0, 1, 0} {
		t.Fatalf("first subscriber: subscribes/positions/histories %v, want [0 1 0]", got)
	}

	c2 := n.dial(t)
	c2.Connect("v")
	res = c2.MustSubscribe(2, "pos:a", "")
	if res["epoch"] != top.Epoch || res["offset"] != float64(top.Offset) {
		t.Fatalf("second subscriber's reply %v, the stream is at %+v", res, top)
	}
	if got := eng.calls(); got != [3]int32{0, 0, 1} {
		t.Fatalf("second subscriber: subscribes/positions/histories %v, want [0 0 1]", got)
	}

	// What is published next reaches both, after the position they got.
	publishN(t, n.hub, "pos:a", 1)
	for _, c := range []*rawClient{c1, c2} {
		if p := jsonclient.PushesOf(c.Drain(), "pos:a", "pub"); len(p) != 1 || jsonclient.Num(p[0]["offset"]) != int64(top.Offset)+1 {
			t.Fatalf("after subscribing: %v", p)
		}
	}
}

// TestSubscribePositionFallback: an engine without PositionSubscriber is
// subscribed, then read, as before.
func TestSubscribePositionFallback(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Engine: plainEngine{memory.New(memory.Config{})}, Channels: positionedNamespace()})
	top := publishN(t, n.hub, "pos:a", 2)
	c := n.dial(t)
	c.Connect("u")
	if res := c.MustSubscribe(2, "pos:a", ""); res["epoch"] != top.Epoch || res["offset"] != float64(top.Offset) {
		t.Fatalf("reply %v, the stream is at %+v", res, top)
	}
}

// presenceJoinEngine is the memory engine as an engine.PresenceJoiner,
// counting the calls a subscriber's join makes.
type presenceJoinEngine struct {
	*memory.Engine
	both, presences, joins atomic.Int32
}

func (e *presenceJoinEngine) AddPresenceJoin(ctx context.Context, ch string, info *engine.ClientInfo, ttl time.Duration) error {
	e.both.Add(1)
	if err := e.Engine.AddPresence(ctx, ch, info, ttl); err != nil {
		return err
	}
	return e.Engine.PublishJoin(ctx, ch, info)
}

func (e *presenceJoinEngine) AddPresence(ctx context.Context, ch string, info *engine.ClientInfo, ttl time.Duration) error {
	e.presences.Add(1)
	return e.Engine.AddPresence(ctx, ch, info, ttl)
}

func (e *presenceJoinEngine) PublishJoin(ctx context.Context, ch string, info *engine.ClientInfo) error {
	e.joins.Add(1)
	return e.Engine.PublishJoin(ctx, ch, info)
}

// TestSubscribePresenceJoinOneStep: a subscriber with presence and join
// events is announced in one engine call where the engine can
// (engine.PresenceJoiner), in two where it has presence alone.
func TestSubscribePresenceJoinOneStep(t *testing.T) {
	t.Parallel()
	eng := &presenceJoinEngine{Engine: memory.New(memory.Config{})}
	n := startNode(t, hub.Config{Engine: eng, Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("both", hub.NamespaceOptions{AllowSubscribeForClient: true, Presence: true, JoinLeave: true, ForcePushJoinLeave: true}),
		ns("presence", hub.NamespaceOptions{AllowSubscribeForClient: true, Presence: true}),
	}}})
	c := n.dial(t)
	id := c.Connect("u")["client"].(string)
	c.MustSubscribe(2, "both:a", "")
	if j := jsonclient.PushesOf(c.Drain(), "both:a", "join"); len(j) != 1 || jsonclient.Path(j[0], "info", "client") != id {
		t.Fatalf("own join: %v", j)
	}
	if got := [3]int32{eng.both.Load(), eng.presences.Load(), eng.joins.Load()}; got != [3]int32{1, 0, 0} {
		t.Fatalf("presence and join: AddPresenceJoin/AddPresence/PublishJoin %v, want [1 0 0]", got)
	}
	if p, err := n.hub.Presence(context.Background(), "both:a"); err != nil || p[id] == nil {
		t.Fatalf("presence of both:a: %v, %v", p, err)
	}
	c.MustSubscribe(3, "presence:a", "")
	c.Drain()
	if got := [3]int32{eng.both.Load(), eng.presences.Load(), eng.joins.Load()}; got != [3]int32{1, 1, 0} {
		t.Fatalf("presence alone: AddPresenceJoin/AddPresence/PublishJoin %v, want [1 1 0]", got)
	}
}
