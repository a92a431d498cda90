package hub_test

import (
	"context"
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
	"github.com/heraldhq/herald/protocol"
)

// gatedHistoryEngine is the memory engine whose reads of channel "big"
// with publications (a limit, or a recovery) wait, once armed, until
// release is closed, each telling reads first: so every command of a
// test passes the check made as it starts before any reply is queued, as
// 200 commands arriving together do on a real node. A read of the
// position alone (limit 0) tells done: the command sent before it on the
// same connection has replied.
type gatedHistoryEngine struct {
	*memory.Engine
	armed   atomic.Bool
	reads   chan struct{}
	release chan struct{}
	done    chan struct{}
}

func (e *gatedHistoryEngine) History(ctx context.Context, ch string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	if e.armed.Load() && ch == "big" {
		if req.Limit != 0 {
			e.reads <- struct{}{}
			<-e.release
		} else {
			e.done <- struct{}{}
		}
	}
	return e.Engine.History(ctx, ch, req)
}

// deafTransport is a client that stopped reading: it takes frames under
// 64 KiB at once (noting the error 111 replies among them), and the write
// of a larger one never finishes until the connection closes, as on a
// socket whose peer reads nothing. Writes are detached (WriteStarter), so
// the frame counts with the node's queued bytes while it waits.
type deafTransport struct {
	shed      *atomic.Int64
	refused   chan struct{} // told of each error 111 written, not waited for
	closes    chan uint32   // the hub's close codes, not waited for
	gone      chan struct{}
	closeOnce sync.Once
}

func (t *deafTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *deafTransport) WriteFrame(frame []byte) error {
	if strings.Contains(string(frame), `"code":111`) {
		t.shed.Add(1)
		select {
		case t.refused <- struct{}{}:
		default:
		}
	}
	return nil
}

func (t *deafTransport) StartFrame(frame []byte) (bool, error) {
	if len(frame) >= 64<<10 {
		return false, nil
	}
	return true, t.WriteFrame(frame)
}

func (t *deafTransport) FinishFrame([]byte) error {
	<-t.gone
	return errClosedTransport
}

func (t *deafTransport) Close(code uint32, _ string) {
	t.closeOnce.Do(func() {
		close(t.gone)
		select {
		case t.closes <- code:
		default:
		}
	})
}

type transportError string

func (e transportError) Error() string { return string(e) }

const errClosedTransport = transportError("closed")

// TestLargeRepliesAdmittedWithinNodeBudget: 16 clients that stopped
// reading each ask for 300 KB (a history with a limit, a recovering
// subscribe, or a connect whose server-side subscription recovers) at
// once, so all of them pass the check made as the command starts; the
// replies admitted must still keep the node's queues within half of
// client.node_queue_max_size (2 MiB), the others get error 111 (a connect
// is closed with 3013), and a fresh client is answered. Before, every
// reply was queued: 4.9 MB (bench/attacks.sh noread: 200 clients asking
// 6 MB each, 1.5 GB).
func TestLargeRepliesAdmittedWithinNodeBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, connect, cmd string }{
		{"history", "", `{"id":2,"history":{"channel":"big","limit":10}}` + "\n"},
		{"recovering subscribe", "", `{"id":2,"subscribe":{"channel":"big","recover":true,"offset":0,"epoch":"EPOCH","recoverable":true,"positioned":true}}` + "\n"},
		{"connect", `,"subs":{"big":{"recover":true,"offset":0,"epoch":"EPOCH"}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const (
				clients = 16
				pubs    = 10
				budget  = 2 << 20 // replies may fill half
				// Small replies outside the reservation (connect replies,
				// the position replies, the refusals) and the estimate's
				// error, not a reply's worth.
				slack = 64 << 10
			)
			eng := &gatedHistoryEngine{Engine: memory.New(memory.Config{}),
				reads: make(chan struct{}, clients), release: make(chan struct{}), done: make(chan struct{}, clients)}
			n := startNodeMem(t, hub.Config{
				Engine: eng,
				Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
					AllowSubscribeForClient: true, AllowHistoryForClient: true, AllowRecovery: true,
					// Server-side subscriptions recover only with ForceRecovery.
					ForceRecovery: true, HistorySize: pubs, HistoryTTL: time.Minute,
				}},
				// A queue limit no reply reaches: the clients are not closed
				// as slow, they keep what they were given.
				Client: hub.ClientConfig{NodeQueueMaxSize: budget, QueueMaxSize: 64 << 20},
			})
			data := []byte(`{"p":"` + strings.Repeat("x", 30<<10) + `"}`)
			var sp engine.StreamPosition
			for range pubs {
				var err error
				if sp, err = n.hub.Publish(context.Background(), "big", data, hub.PublishOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			eng.armed.Store(true)
			var shed atomic.Int64
			closes := make(chan uint32, clients)
			refused := make(chan struct{}, clients)
			connect := strings.Replace(tc.connect, "EPOCH", sp.Epoch, 1)
			cmd := strings.Replace(tc.cmd, "EPOCH", sp.Epoch, 1)
			for i := range clients {
				tr := &deafTransport{shed: &shed, refused: refused, closes: closes, gone: make(chan struct{})}
				c := n.hub.NewClient(tr, "deaf-"+strconv.Itoa(i))
				t.Cleanup(func() { tr.Close(0, "") })
				claims := auth.ConnectClaims{User: "deaf-" + strconv.Itoa(i)}
				if tc.connect != "" {
					claims.Channels = []string{"big"} // subscribed at connect
				}
				tok := token(t, claims)
				c.HandleFrame([]byte(`{"id":1,"connect":{"token":"` + tok + `"` + connect + `}}` + "\n" + cmd + `{"id":3,"history":{"channel":"big"}}`))
			}
			for range clients {
				recv(t, eng.reads, "a deaf client's read of the channel")
			}
			close(eng.release) // every command has passed the check made as it starts
			// Each large command has replied when the client's next one
			// reads the position, or closed the client (a connect).
			for range clients {
				select {
				case <-eng.done:
				case code := <-closes:
					if tc.connect == "" || code != uint32(protocol.DisconnectTooManyRequests) {
						t.Fatalf("a deaf client was closed with %d", code)
					}
					shed.Add(1)
				case <-time.After(10 * time.Second):
					t.Fatal("a deaf client's large command neither replied nor closed it in 10s")
				}
			}
			if q := n.hub.QueuedBytes(); q > budget/2+slack {
				t.Fatalf("%d clients that do not read asked for %d bytes each at once: %d bytes queued, over half of client.node_queue_max_size %d", clients, pubs*len(data), q, budget)
			}
			// A refusal is queued before the client's next command reads,
			// and written when a writer gets to the client, which can be
			// after: wait for the first (a connect's refusal is its close,
			// counted above).
			if shed.Load() == 0 {
				select {
				case <-refused:
				case <-time.After(10 * time.Second):
					t.Fatal("no large reply was refused with error 111 in 10s")
				}
			}
			eng.armed.Store(false)
			// Replies fill half the bound at most: publishing goes on.
			if _, err := n.hub.Publish(context.Background(), "other", []byte(`{}`), hub.PublishOptions{}); err != nil {
				t.Fatalf("publish after the large replies: %v", err)
			}
			c := n.dial(t)
			c.Connect("fresh")
			c.MustSubscribe(2, "other", "")
		})
	}
}
