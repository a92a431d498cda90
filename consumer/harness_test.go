package consumer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/consumer"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/protocol"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// node is a hub with the API executor the consumers apply commands with.
type node struct {
	hub  *hub.Hub
	exec *api.Executor
}

func startNode(t *testing.T) *node {
	t.Helper()
	h := hubtest.Start(t, hub.Config{
		Engine: memory.New(memory.Config{}),
		Client: hub.ClientConfig{AllowAnonymousConnectWithoutToken: true},
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, AllowSubscribeForAnonymous: true,
		}},
	})
	x, err := api.NewExecutor(h, api.Config{Logger: testenv.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	return &node{hub: h, exec: x}
}

// subscriber is a client subscribed to one channel; it collects the data
// of every publication it receives.
type subscriber struct {
	mu   sync.Mutex
	got  []string
	at   []time.Time // when each arrived
	more chan struct{}
}

func subscribe(t *testing.T, h *hub.Hub, channel string) *subscriber {
	t.Helper()
	conn, _ := hubtest.Dial(h, protocol.TypeJSON)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := conn.Send([]byte(`{"id":1,"connect":{}}` + "\n" + `{"id":2,"subscribe":{"channel":"` + channel + `"}}`)); err != nil {
		t.Fatal(err)
	}
	for replies := 0; replies < 2; {
		frame, err := conn.Next(ctx)
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		replies += bytes.Count(frame, []byte("\n")) + 1
	}
	s := &subscriber{more: make(chan struct{}, 1)}
	go func() {
		for {
			frame, err := conn.Next(context.Background())
			if err != nil {
				return
			}
			for _, line := range bytes.Split(frame, []byte("\n")) {
				var m struct {
					Push *struct {
						Pub *struct {
							Data json.RawMessage `json:"data"`
						} `json:"pub"`
					} `json:"push"`
				}
				if json.Unmarshal(line, &m) != nil || m.Push == nil || m.Push.Pub == nil {
					continue
				}
				// JSONB stores {"n":1} as {"n": 1}: compare compact forms.
				var data bytes.Buffer
				if json.Compact(&data, m.Push.Pub.Data) != nil {
					data.Write(m.Push.Pub.Data)
				}
				s.mu.Lock()
				s.got = append(s.got, data.String())
				s.at = append(s.at, time.Now())
				s.mu.Unlock()
				select {
				case s.more <- struct{}{}:
				default:
				}
			}
		}
	}()
	t.Cleanup(conn.Drop)
	return s
}

// waitFor waits until the subscriber holds n publications, and returns them.
func (s *subscriber) waitFor(t *testing.T, n int, within time.Duration) []string {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got := append([]string(nil), s.got...)
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-s.more:
		case <-deadline.C:
			t.Fatalf("%d publications after %s, want %d", len(got), within, n)
		}
	}
}

// settle checks that no more than n publications arrive within d: the
// consumers have nothing left to deliver twice.
func (s *subscriber) settle(t *testing.T, n int, d time.Duration) []string {
	t.Helper()
	time.Sleep(d) // waiting for something that must not happen
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.got) != n {
		t.Fatalf("%d publications, want exactly %d: %v", len(s.got), n, s.got)
	}
	return append([]string(nil), s.got...)
}

// hookExec runs the real executor, after hook (when set) saw the command.
type hookExec struct {
	next consumer.Executor
	mu   sync.Mutex
	hook func(ctx context.Context, method string, body []byte) error
}

func (x *hookExec) Execute(ctx context.Context, method string, body []byte) (any, error) {
	x.mu.Lock()
	hook := x.hook
	x.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, method, body); err != nil {
			return nil, err
		}
	}
	return x.next.Execute(ctx, method, body)
}

func (x *hookExec) set(hook func(ctx context.Context, method string, body []byte) error) {
	x.mu.Lock()
	x.hook = hook
	x.mu.Unlock()
}

// hangAt is an executor that applies commands through next until the
// k-th, in which it hangs until its context ends: a node stuck in a
// command, or killed in one. stuck closes when the k-th begins.
func hangAt(next consumer.Executor, k int) (x *hookExec, stuck <-chan struct{}) {
	began := make(chan struct{})
	x = &hookExec{next: next}
	var seen atomic.Int32
	x.set(func(ctx context.Context, _ string, _ []byte) error {
		if seen.Add(1) == int32(k) {
			close(began)
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	return x, began
}

// runGroup starts a group of one consumer and stops it when t ends.
func runGroup(t *testing.T, cfg consumer.Config, exec consumer.Executor, nodeName string) *consumer.Group {
	t.Helper()
	g, err := consumer.NewGroup([]consumer.Config{cfg}, exec, nodeName, testenv.Logger())
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	t.Cleanup(func() { stopGroup(t, g) })
	return g
}

func stopGroup(t *testing.T, g *consumer.Group) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.Stop(ctx); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// counter reads a group's counter or gauge for consumer name.
func counter(t *testing.T, g *consumer.Group, metric, name string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(g.Collectors()...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labelIs(m, name) {
				if m.Counter != nil {
					return m.Counter.GetValue()
				}
				return m.Gauge.GetValue()
			}
		}
	}
	t.Fatalf("no %s{consumer=%q}", metric, name)
	return 0
}

func labelIs(m *dto.Metric, name string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == "consumer" && l.GetValue() == name {
			return true
		}
	}
	return false
}

// eventually polls cond every 10ms until it holds or within passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// publishCmd is a publish request with an idempotency key (when key is
// not "") carrying {"n":n}.
func publishCmd(channel string, n int, key string) string {
	if key == "" {
		return fmt.Sprintf(`{"channel":%q,"data":{"n":%d}}`, channel, n)
	}
	return fmt.Sprintf(`{"channel":%q,"data":{"n":%d},"idempotency_key":%q}`, channel, n, key)
}

// await waits for ch to close, at most 20s.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("not within 20s: %s", what)
	}
}

// orderedTwoGroups is the second half of every source's two-node ordering
// test: each partition p's producer goroutine writes commands 1..each of
// channel "p<p>" at once with the others (write(p, i)); every subscriber
// then gets its channel's publications complete and in order, and the two
// groups applied each command exactly once between them.
func orderedTwoGroups(t *testing.T, subs []*subscriber, each int, name string, groups [2]*consumer.Group, wait time.Duration, write func(p, i int)) {
	t.Helper()
	var wg sync.WaitGroup
	for p := range subs {
		wg.Go(func() {
			for i := 1; i <= each; i++ {
				write(p, i)
			}
		})
	}
	wg.Wait()
	for p := range subs {
		equal(t, subs[p].waitFor(t, each, wait), nums(each))
	}
	// A command is counted once its batch commits, which may be after its
	// publication reached the subscriber: wait for the count, then check
	// that it is not over (a command applied twice).
	want := float64(len(subs) * each)
	applied := func() float64 {
		return counter(t, groups[0], "herald_consumer_applied_total", name) + counter(t, groups[1], "herald_consumer_applied_total", name)
	}
	eventually(t, 5*time.Second, "the applied count", func() bool { return applied() >= want })
	if got := applied(); got != want {
		t.Fatalf("the nodes applied %v commands, want %v", got, want)
	}
	for p := range subs {
		subs[p].settle(t, each, 0)
	}
}
