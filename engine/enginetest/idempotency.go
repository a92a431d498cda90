package enginetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// idempotency runs the tests of idempotent publishing.
func (s *suite) idempotency(t *testing.T) {
	t.Run("RepeatNotDelivered", s.testIdempotentRepeat)
	t.Run("KeyExpires", s.testIdempotentExpiry)
	t.Run("ConcurrentRetries", s.testIdempotentConcurrent)
	t.Run("KeptThroughItsWindow", s.testIdempotentKeptThroughWindow)
}

// testIdempotentKeptThroughWindow: a key is remembered for its whole
// window however many other keys the channel gets meanwhile (12,000
// evicted it from a count-bounded cache before); an engine that cannot
// remember them all may refuse the others (engine.ErrIdempotencyFull),
// never forget the key early.
func (s *suite) testIdempotentKeptThroughWindow(t *testing.T) {
	if !s.caps.History {
		t.Skip("the check compares stream positions, which need history")
	}
	n := s.start(t)
	ch := channel(t, "a")
	// With history every publication has its own offset, so a retry that
	// returns the first one's position was remembered.
	opts := s.historyOpts(10)
	first := n.publish(t, ch, []byte(`"first"`), keyed(opts, "k", time.Hour))
	const others, workers = 12000, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < others; i += workers {
				_, err := n.Publish(ctx(t), ch, &engine.Publication{Data: []byte(`1`)}, keyed(opts, fmt.Sprintf("other-%d", i), time.Hour))
				switch {
				case errors.Is(err, engine.ErrIdempotencyFull):
					mu.Lock()
					refused++
					mu.Unlock()
				case err != nil:
					t.Errorf("publish other key %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	again := n.publish(t, ch, []byte(`"first again"`), keyed(opts, "k", time.Hour))
	if again != first {
		t.Fatalf("after %d other keys (%d refused) the key was forgotten: the retry got %+v, the first %+v", others, refused, again, first)
	}
}

func keyed(opts engine.PublishOptions, key string, ttl time.Duration) engine.PublishOptions {
	opts.IdempotencyKey, opts.IdempotentResultTTL = key, ttl
	return opts
}

// onlyThen checks that after the publications already awaited, the next
// delivery on ch is the marker: nothing else (a repeat) came between.
func onlyThen(t *testing.T, n, by *node, ch string, already int, opts engine.PublishOptions) {
	t.Helper()
	by.publish(t, ch, []byte(`"marker"`), opts)
	got := n.rec.awaitPubs(t, ch, already+1)
	if last := got[len(got)-1]; !bytes.Equal(last.pub.Data, []byte(`"marker"`)) {
		t.Fatalf("delivery %d is %s, want the marker: a repeat was delivered", already+1, last.pub.Data)
	}
}

func (s *suite) testIdempotentRepeat(t *testing.T) {
	for name, opts := range map[string]engine.PublishOptions{"history": s.historyOpts(10), "no-history": {}} {
		if name == "history" && !s.caps.History {
			continue
		}
		t.Run(name, func(t *testing.T) {
			n := s.start(t)
			ch, other := channel(t, "a"), channel(t, "b")
			n.subscribe(t, ch)
			first := n.publish(t, ch, []byte(`"one"`), keyed(opts, "k1", time.Minute))
			again := n.publish(t, ch, []byte(`"one again"`), keyed(opts, "k1", time.Minute))
			if again != first {
				t.Fatalf("repeat returned %+v, the first %+v", again, first)
			}
			n.rec.awaitPubs(t, ch, 1)
			second := n.publish(t, ch, []byte(`"two"`), keyed(opts, "k2", time.Minute))
			if name == "history" && second.Offset != first.Offset+1 {
				t.Fatalf("another key: offset %d after %d", second.Offset, first.Offset)
			}
			// The key is per channel.
			n.subscribe(t, other)
			n.publish(t, other, []byte(`"elsewhere"`), keyed(opts, "k1", time.Minute))
			n.rec.awaitPubs(t, other, 1)
			onlyThen(t, n, n, ch, 2, opts)
			if got := n.rec.awaitPubs(t, ch, 3); !bytes.Equal(got[0].pub.Data, []byte(`"one"`)) || !bytes.Equal(got[1].pub.Data, []byte(`"two"`)) {
				t.Fatalf("deliveries %s, %s: want one, two", got[0].pub.Data, got[1].pub.Data)
			}
		})
	}
}

// testIdempotentExpiry: after the result's TTL the key publishes again.
func (s *suite) testIdempotentExpiry(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	n.subscribe(t, ch)
	opts := keyed(s.historyOpts(10), "k", 300*time.Millisecond)
	first := n.publish(t, ch, []byte(`"one"`), opts)
	deadline := time.Now().Add(5 * time.Second)
	for {
		sp := n.publish(t, ch, []byte(`"again"`), opts)
		if sp != first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the key was still remembered 5 s after a 300 ms TTL")
		}
		time.Sleep(50 * time.Millisecond) // polling an expiry: nothing to await
	}
	got := n.rec.awaitPubs(t, ch, 2)
	if !bytes.Equal(got[1].pub.Data, []byte(`"again"`)) {
		t.Fatalf("after expiry: %s", got[1].pub.Data)
	}
}

// testIdempotentConcurrent: retries racing each other, through two nodes
// when the engine is a cluster, publish once.
func (s *suite) testIdempotentConcurrent(t *testing.T) {
	nodes := []*node{s.start(t)}
	if s.caps.Cluster {
		nodes = append(nodes, s.start(t))
	}
	ch := channel(t, "a")
	for _, n := range nodes {
		n.subscribe(t, ch)
	}
	opts := s.historyOpts(100)
	if !s.caps.History {
		opts = engine.PublishOptions{}
	}
	const tries = 8
	results := make([]engine.StreamPosition, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := nodes[i%len(nodes)]
			sp, err := n.Publish(ctx(t), ch, &engine.Publication{Data: []byte(`"once"`)}, keyed(opts, "retry", time.Minute))
			if err != nil {
				t.Errorf("publish %d: %v", i, err)
			}
			results[i] = sp
		}()
	}
	wg.Wait()
	for i, sp := range results {
		if sp != results[0] {
			t.Fatalf("try %d got %+v, try 0 %+v", i, sp, results[0])
		}
	}
	for _, n := range nodes {
		onlyThen(t, n, nodes[0], ch, 1, opts)
	}
}

// testIdempotencyUnsupported: an engine without idempotency says so
// instead of publishing twice silently.
func (s *suite) testIdempotencyUnsupported(t *testing.T) {
	n := s.start(t)
	_, err := n.Publish(ctx(t), channel(t, "a"), &engine.Publication{Data: []byte(`1`)}, keyed(engine.PublishOptions{}, "k", time.Minute))
	if !errors.Is(err, engine.ErrIdempotencyUnsupported) {
		t.Fatalf("publish with a key: %v, want ErrIdempotencyUnsupported", err)
	}
}
