package nats

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

// TestPublisherReconnect cuts the publishing node's connection to NATS
// three times while four publishers stream to a channel; the suite's
// Reconnect test cuts the subscribing node's. A publish caught by a cut
// may fail. Delivery is at most once: nothing may arrive twice or out of
// each publisher's order, and delivery must resume after each reconnect.
func TestPublisherReconnect(t *testing.T) {
	base := testOptions(t)
	pubOpts, pubProxy := proxiedOptions(t, base)
	pubNode := startEngine(t, pubOpts, enginetest.NewRecorder())
	rec := enginetest.NewRecorder()
	subNode := startEngine(t, base, rec)
	ch := "stream_" + randomToken(4)
	if err := subNode.Subscribe(t.Context(), ch); err != nil {
		t.Fatal(err)
	}

	const total, publishers = 3000, 4
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	var wg sync.WaitGroup
	// On any exit, a fatal failure included, stop the publishers first.
	defer wg.Wait()
	defer cancel()
	var sent, failed atomic.Int64
	for p := range publishers {
		wg.Go(func() {
			for i := p; i < total; i += publishers {
				// A publish caught by the cut may fail; it is not retried,
				// which could deliver it twice.
				if _, err := pubNode.Publish(ctx, ch, &engine.Publication{Data: fmt.Appendf(nil, "%d/%d", p, i)}, engine.PublishOptions{}); err != nil {
					failed.Add(1)
				}
				sent.Add(1)
				time.Sleep(200 * time.Microsecond) // a sustained stream, not one burst
			}
		})
	}
	cuts := 0
	for _, at := range []int64{total / 4, total / 2, 3 * total / 4} {
		for sent.Load() < at && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cuts += cutConnection(t, pubNode, pubProxy)
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("stream did not finish: %d of %d published", sent.Load(), total)
	}
	// Delivery resumes: a marker published after everything arrives.
	enginetest.PublishMarker(t, pubNode, rec, ch, "end")
	delivered := enginetest.CheckAtMostOnce(t, rec.Publications(ch), publishers, "end")
	t.Logf("cut %d connections; %d publishes failed; delivered %d of %d; publisher %+v",
		cuts, failed.Load(), delivered, total, pubNode.Stats())
	if failed.Load() > total/2 {
		t.Fatalf("%d of %d publishes failed", failed.Load(), total)
	}
}

// TestLargeMessagesInterleaved sends messages several times the server's
// max_payload while other publishers send small ones on the same channel:
// every message arrives whole and in its publisher's order.
func TestLargeMessagesInterleaved(t *testing.T) {
	opts := testOptions(t)
	a := startEngine(t, opts, enginetest.NewRecorder())
	b := startEngine(t, opts, enginetest.NewRecorder())
	rec := enginetest.NewRecorder()
	sub := startEngine(t, opts, rec)
	ch := "large_" + randomToken(4)
	if err := sub.Subscribe(t.Context(), ch); err != nil {
		t.Fatal(err)
	}
	large := make([][]byte, 3)
	for i := range large {
		large[i] = make([]byte, (3<<20)+i*1000)
		_, _ = rand.Read(large[i])
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, data := range large {
			if _, err := a.Publish(t.Context(), ch, &engine.Publication{Data: data}, engine.PublishOptions{}); err != nil {
				t.Errorf("publish large: %v", err)
			}
		}
	})
	const small = 200
	for _, n := range []*Engine{a, b} {
		wg.Go(func() {
			for i := range small {
				if _, err := n.Publish(t.Context(), ch, &engine.Publication{Data: fmt.Appendf(nil, "%p/%d", n, i)}, engine.PublishOptions{}); err != nil {
					t.Errorf("publish small: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	want := len(large) + 2*small
	got := rec.WaitForPublications(t, ch, want, 30*time.Second)
	if len(got) != want {
		t.Fatalf("%d deliveries, want %d", len(got), want)
	}
	nextLarge := 0
	for _, d := range got {
		if len(d.Pub.Data) > 1000 {
			if !bytes.Equal(d.Pub.Data, large[nextLarge]) {
				t.Fatalf("large message %d arrived damaged or out of order (%d bytes)", nextLarge, len(d.Pub.Data))
			}
			nextLarge++
		}
	}
	if st := sub.Stats(); st.Dropped != 0 || st.Malformed != 0 {
		t.Errorf("stats %+v", st)
	}
}
