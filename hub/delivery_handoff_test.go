package hub_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/protocol"
)

// padTransport takes every write at once and reports the first frame
// that carries a publication padded with "x".
type padTransport struct {
	got  chan struct{} // closed at the first padded frame
	seen atomic.Bool
}

func newPadTransport() *padTransport { return &padTransport{got: make(chan struct{})} }

func (t *padTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *padTransport) WriteFrame(frame []byte) error {
	if strings.Contains(string(frame), `"pad"`) && t.seen.CompareAndSwap(false, true) {
		close(t.got)
	}
	return nil
}

func (t *padTransport) StartFrame(frame []byte) (bool, error) { return true, t.WriteFrame(frame) }

func (t *padTransport) FinishFrame([]byte) error { return nil }

func (t *padTransport) Close(uint32, string) {}

// plainStuckTransport can only write and wait (it is no WriteStarter):
// once a padded publication comes, its write waits until the release.
type plainStuckTransport struct{ s *startingTransport }

func (t plainStuckTransport) Protocol() protocol.Type          { return protocol.TypeJSON }
func (t plainStuckTransport) WriteFrame(frame []byte) error    { return t.s.WriteFrame(frame) }
func (t plainStuckTransport) Close(code uint32, reason string) { t.s.stuck.Close(code, reason) }

// TestFanoutShareDoesNotWaitForAStuckClient: a fan-out hands its
// subscribers to the writers in shares (delivery_handoff.go). A
// subscriber whose socket takes nothing holds none of the others: every
// reading subscriber gets the publication while the stuck ones' writes
// wait. "detached" has clients whose transport starts writes (their
// write leaves the pool and hands the rest of its share back); "waits"
// has one whose transport can only wait in its write (it goes to a writer
// alone, never in a share); "waiting pool" has stuck clients whose writes
// wait in the pool's writers (ClientConfig.WaitOnBlockedWrites: every
// client goes to a writer alone).
func TestFanoutShareDoesNotWaitForAStuckClient(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stuck int // of 48 subscribers, every 48/stuck-th
		tr    func(release <-chan struct{}) hub.Transport
		wait  bool // ClientConfig.WaitOnBlockedWrites
	}{
		{"detached", 8, func(r <-chan struct{}) hub.Transport {
			return &startingTransport{stuck: newStuckTransport(r)}
		}, false},
		{"waits", 1, func(r <-chan struct{}) hub.Transport {
			return plainStuckTransport{&startingTransport{stuck: newStuckTransport(r)}}
		}, false},
		{"waiting pool", 8, func(r <-chan struct{}) hub.Transport {
			return &startingTransport{stuck: newStuckTransport(r)}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startNodeMem(t, anonymousConfig(hub.ClientConfig{WaitOnBlockedWrites: tc.wait})).hub
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			const subscribers = 48 // three shares
			var reading []*padTransport
			for i := range subscribers {
				var tr hub.Transport
				if i%(subscribers/tc.stuck) == 0 {
					tr = tc.tr(release)
				} else {
					p := newPadTransport()
					reading = append(reading, p)
					tr = p
				}
				c := h.NewClient(tr, "127.0.0.1:"+strconv.Itoa(i))
				t.Cleanup(c.HandleClose)
				c.HandleFrame([]byte(`{"id":1,"connect":{}}`))
				c.HandleFrame([]byte(`{"id":2,"subscribe":{"channel":"s"}}`))
			}
			testenv.Eventually(t, "every subscription", 5*time.Second, func() bool {
				return h.NumSubscriptions() == subscribers
			})
			pad := []byte(`{"pad":"` + strings.Repeat("x", 1024) + `"}`)
			if _, err := h.Publish(context.Background(), "s", pad, hub.PublishOptions{}); err != nil {
				t.Fatal(err)
			}
			deadline := time.After(3 * time.Second)
			for i, p := range reading {
				select {
				case <-p.got:
				case <-deadline:
					n := 0
					for _, p := range reading {
						if p.seen.Load() {
							n++
						}
					}
					t.Fatalf("reading subscriber %d (and %d of %d in all) did not get the publication within 3s beside %d stuck",
						i, len(reading)-n, len(reading), tc.stuck)
				}
			}
		})
	}
}
