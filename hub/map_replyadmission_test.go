package hub_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
)

// gatedMapEngine is the memory engine whose reads of the map channel
// "mm:big" (its state, or its stream) wait, once armed, until release is
// closed, each telling reads first, as gatedHistoryEngine does for
// history. A state read of "mm:done" tells done: the map request sent
// before it on the same connection has been answered (queued), and it
// then waits until finish is closed: the client's queue is written when
// its commands are done, so no reply is written before every page has
// been admitted or refused. (A flush takes the queue's bytes off the
// node's count before the write that cannot finish puts them back: in
// that moment another page could be admitted past the budget.) Reads
// after the first of a request (the recovery of one going live) do not
// wait to be counted.
type gatedMapEngine struct {
	*memory.Engine
	armed   atomic.Bool
	reads   chan struct{}
	release chan struct{}
	done    chan struct{}
	finish  chan struct{}
}

func (e *gatedMapEngine) gate() {
	if !e.armed.Load() {
		return
	}
	select {
	case e.reads <- struct{}{}:
	default:
	}
	<-e.release
}

func (e *gatedMapEngine) MapState(ctx context.Context, ch string, req engine.MapStateRequest) (engine.MapStatePage, error) {
	switch {
	case ch == "mm:big":
		e.gate()
	case ch == "mm:done" && e.armed.Load():
		e.done <- struct{}{}
		<-e.finish
	}
	return e.Engine.MapState(ctx, ch, req)
}

func (e *gatedMapEngine) History(ctx context.Context, ch string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	if ch == "mm:big" {
		e.gate()
	}
	return e.Engine.History(ctx, ch, req)
}

// mapAdmissionNode is a node started with start, with the map namespace
// mm (pages from one entry up) and NodeQueueMaxSize budget, whose channel
// mm:big holds keys keys of 30 KB each, all of them still in its change
// stream.
func mapAdmissionNode(t *testing.T, start func(*testing.T, hub.Config) *node, eng engine.Engine, budget, keys int) (*node, engine.StreamPosition, int) {
	t.Helper()
	n := start(t, hub.Config{
		Engine: eng,
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("mm", hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionMap,
				Map: hub.MapOptions{Mode: hub.MapPersistent, MinPageSize: 1}}),
		}},
		// A queue limit no reply reaches: the clients are not closed as
		// slow, they keep what they were given.
		Client: hub.ClientConfig{NodeQueueMaxSize: budget, QueueMaxSize: 64 << 20},
	})
	data := `{"p":"` + strings.Repeat("x", 30<<10) + `"}`
	var sp engine.StreamPosition
	for i := range keys {
		sp = mapSet(t, n.hub, "mm:big", fmt.Sprintf("k%02d", i), data)
	}
	return n, sp, len(data)
}

// TestMapPagesAdmittedWithinNodeBudget: 16 clients that stopped reading
// each ask at once for a map page of 10 entries of 30 KB (a state page, a
// stream page, or the stream's last page that makes them live), so that
// all of them pass the check made as the request starts; the pages
// admitted must keep the node's queues within half of
// client.node_queue_max_size, the others get error 111 (one going live is
// not left subscribed), and a fresh client still syncs a map. Before, map
// pages were queued unadmitted: 16 × 300 KB against a 1 MiB share.
func TestMapPagesAdmittedWithinNodeBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, req string
		live      bool
	}{
		{"state page", `"phase":2,"limit":10`, false},
		{"stream page", `"phase":1,"limit":10,"offset":0,"epoch":"EPOCH"`, false},
		{"going live", `"phase":1,"limit":10,"offset":10,"epoch":"EPOCH"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const (
				clients = 16
				budget  = 2 << 20 // replies may fill half
				// Small replies outside the reservation and the
				// estimate's error, not a page's worth.
				slack = 64 << 10
			)
			eng := &gatedMapEngine{Engine: memory.New(memory.Config{}),
				reads: make(chan struct{}, clients), release: make(chan struct{}), done: make(chan struct{}, clients), finish: make(chan struct{})}
			n, sp, size := mapAdmissionNode(t, startNodeMem, eng, budget, 20)
			finish := sync.OnceFunc(func() { close(eng.finish) })
			t.Cleanup(finish) // before the node stops, also on failure
			eng.armed.Store(true)
			var shed atomic.Int64
			closes := make(chan uint32, clients)
			req := strings.Replace(tc.req, "EPOCH", sp.Epoch, 1)
			for i := range clients {
				tr := &deafTransport{shed: &shed, closes: closes, gone: make(chan struct{})}
				c := n.hub.NewClient(tr, "deaf-"+strconv.Itoa(i))
				t.Cleanup(func() { tr.Close(0, "") })
				tok := token(t, auth.ConnectClaims{User: "deaf-" + strconv.Itoa(i)})
				c.HandleFrame([]byte(`{"id":1,"connect":{"token":"` + tok + `"}}` + "\n" +
					`{"id":2,"subscribe":{"channel":"mm:big","type":1,` + req + `}}` + "\n" +
					`{"id":3,"subscribe":{"channel":"mm:done","type":1,"phase":2,"limit":1}}`))
			}
			for range clients {
				recv(t, eng.reads, "a deaf client's read of the map")
			}
			close(eng.release) // every request has passed the check made as it starts
			for range clients {
				select {
				case <-eng.done:
				case code := <-closes:
					t.Fatalf("a deaf client was closed with %d", code)
				case <-time.After(10 * time.Second):
					t.Fatal("a deaf client's map page request did not reply in 10s")
				}
			}
			if q := n.hub.QueuedBytes(); q > budget/2+slack {
				t.Fatalf("%d clients that do not read asked for %d bytes of map entries each at once: %d bytes queued, over half of client.node_queue_max_size %d", clients, 10*size, q, budget)
			}
			// Counted as each page is refused, before the client's next
			// request (its written error 111 replies come later).
			refused := int(counterValue(t, n.hub, "herald_node_shed_replies_total", "", ""))
			if refused == 0 {
				t.Fatal("no map page was refused with error 111")
			}
			if tc.live {
				if got, want := n.hub.Channels()["mm:big"], clients-refused; got != want {
					t.Fatalf("%d subscribers of mm:big, want the %d whose live reply was admitted (%d refused)", got, want, refused)
				}
			}
			eng.armed.Store(false)
			finish()
			mapSet(t, n.hub, "mm:small", "a", `{"v":1}`)
			c := n.dial(t)
			c.Connect("fresh")
			state, live := syncMap(t, c, "mm:small", 10, nil)
			if state["a"] != `{"v":1}` || live["recoverable"] != true {
				t.Fatalf("a fresh client synced %v, live reply %v", state, live)
			}
		})
	}
}

// TestMapPagesUnderNodeBudget: a client that reads syncs a map of pages
// that each fit the node's budget, however many pages, as before map
// pages were admitted.
func TestMapPagesUnderNodeBudget(t *testing.T) {
	t.Parallel()
	n, _, _ := mapAdmissionNode(t, startNode, memory.New(memory.Config{}), 2<<20, 50)
	c := n.dial(t)
	c.Connect("u")
	state, live := syncMap(t, c, "mm:big", 10, func() {
		mapSet(t, n.hub, "mm:big", "new", `{"v":"new"}`)
	})
	if len(state) != 51 || state["new"] != `{"v":"new"}` || live["recoverable"] != true {
		t.Fatalf("synced %d keys (want 51, with the change made meanwhile), live reply %v", len(state), live)
	}
}
