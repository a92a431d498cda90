package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/transport/websocket"
)

// slowEngine is the memory engine with Subscribe, History and Presence of
// one channel delayed, as a database that is slow for one table or row
// would be.
type slowEngine struct {
	*memory.Engine
	slow  string
	delay time.Duration
}

func (e *slowEngine) wait(ctx context.Context, ch string) error {
	if ch != e.slow {
		return nil
	}
	t := time.NewTimer(e.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *slowEngine) Subscribe(ctx context.Context, ch string) error {
	if err := e.wait(ctx, ch); err != nil {
		return err
	}
	return e.Engine.Subscribe(ctx, ch)
}

func (e *slowEngine) History(ctx context.Context, ch string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	if err := e.wait(ctx, ch); err != nil {
		return nil, engine.StreamPosition{}, err
	}
	return e.Engine.History(ctx, ch, req)
}

func (e *slowEngine) Presence(ctx context.Context, ch string) (map[string]*engine.ClientInfo, error) {
	if err := e.wait(ctx, ch); err != nil {
		return nil, err
	}
	return e.Engine.Presence(ctx, ch)
}

// isolationChannels lets every client subscribe, publish and read history
// and presence of every channel.
func isolationChannels() hub.ChannelConfig {
	return hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
		AllowSubscribeForClient: true, AllowPublishForClient: true,
		AllowHistoryForClient: true, AllowPresenceForClient: true,
		Presence: true, HistorySize: 10, HistoryTTL: time.Minute,
	}}
}

// rawDial opens a WebSocket connection for use from a goroutine other than
// the test's (the harness client fails the test, which only the test's
// goroutine may do).
func rawDial(url string) (*gws.Conn, error) {
	d := gws.Dialer{HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(url, http.Header{})
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return conn, nil
}

// busyClients keeps n clients waiting on the slow channel (subscribe,
// history, presence, over and over) until stop is closed.
func busyClients(t *testing.T, n *node, tok string, count int, ch string, stop <-chan struct{}) *sync.WaitGroup {
	t.Helper()
	var wg sync.WaitGroup
	for i := range count {
		conn, err := rawDial(n.url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		wg.Go(func() {
			cmds := []string{
				`{"id":1,"connect":{"token":"` + tok + `"}}`,
				`{"id":2,"subscribe":{"channel":"` + ch + `","recoverable":true}}`,
			}
			for id := 3; id < 100; id += 2 {
				cmds = append(cmds,
					`{"id":`+strconv.Itoa(id)+`,"history":{"channel":"`+ch+`","limit":1}}`,
					`{"id":`+strconv.Itoa(id+1)+`,"presence":{"channel":"`+ch+`"}}`)
			}
			for _, cmd := range cmds {
				select {
				case <-stop:
					return
				default:
				}
				if conn.WriteMessage(gws.TextMessage, []byte(cmd)) != nil {
					return
				}
			}
			_ = i
		})
	}
	return &wg
}

// p99 of d, which it sorts.
func p99(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[(len(d)*99+99)/100-1]
}

// TestSlowChannelDoesNotHoldOthers: while the engine takes a second for
// every subscribe, history and presence call on one channel, and several
// clients keep asking for them, clients of other channels connect,
// subscribe, publish and receive as fast as ever. With commands on the
// transport's read workers (two here), the slow clients held every worker
// and the others waited seconds.
func TestSlowChannelDoesNotHoldOthers(t *testing.T) {
	eng := &slowEngine{Engine: memory.New(memory.Config{}), slow: "slow", delay: time.Second}
	n := startNodeWS(t, hub.Config{Engine: eng, Channels: isolationChannels()}, websocket.Config{Workers: 2})
	stop := make(chan struct{})
	busy := busyClients(t, n, token(t, auth.ConnectClaims{User: "busy"}), 6, "slow", stop)
	defer func() { close(stop); busy.Wait() }()
	// The busy clients' first subscribe is in the engine now.
	testenv.Eventually(t, "a busy client connected", 5*time.Second, func() bool { return n.hub.NumClients() > 0 })

	var lat []time.Duration
	deadline := time.Now().Add(1500 * time.Millisecond)
	for i := 0; time.Now().Before(deadline) || i < 20; i++ {
		ch := fmt.Sprintf("fast-%d", i)
		start := time.Now()
		c := n.dial(t)
		c.Connect("u" + strconv.Itoa(i))
		lat = append(lat, time.Since(start))

		start = time.Now()
		c.MustSubscribe(2, ch, "")
		lat = append(lat, time.Since(start))

		start = time.Now()
		c.Send(`{"id":3,"publish":{"channel":"` + ch + `","data":{"i":` + strconv.Itoa(i) + `}}}`)
		var gotPub, gotReply bool
		for !gotPub || !gotReply {
			m := c.Next()
			gotPub = gotPub || jsonclient.Path(m, "push", "pub") != nil
			gotReply = gotReply || jsonclient.Num(m["id"]) == 3
		}
		lat = append(lat, time.Since(start))
		c.Drop()
	}
	if p := p99(lat); p > 50*time.Millisecond {
		t.Fatalf("p99 of %d connects, subscribes and publish round trips while a channel is slow: %v (want under 50ms)", len(lat), p)
	}
}

// TestSlowRPCHoldsOnlyItsClient: an OnRPC that takes two seconds delays
// neither other clients (with two read workers, and more slow callers than
// workers) nor the caller's pings; the caller's later commands are
// answered after the RPC, in order.
func TestSlowRPCHoldsOnlyItsClient(t *testing.T) {
	n := startNodeWS(t, hub.Config{
		Channels: isolationChannels(),
		Client:   hub.ClientConfig{PingInterval: 500 * time.Millisecond, PongTimeout: 450 * time.Millisecond},
		Handlers: hub.Handlers{OnRPC: func(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
			if ev.Method == "slow" {
				select {
				case <-time.After(2 * time.Second):
				case <-ctx.Done():
				}
			}
			reply(hub.RPCReply{Data: []byte(`{"method":"` + ev.Method + `"}`)}, nil)
		}},
	}, websocket.Config{Workers: 2})

	// The caller answers its pings from a goroutine of its own and
	// records the ids of its replies.
	callerConn, err := rawDial(n.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { callerConn.Close() })
	type callerResult struct {
		ids   []int64
		pings int
		err   error
	}
	callerDone := make(chan callerResult, 1)
	go func() {
		var r callerResult
		defer func() { callerDone <- r }()
		for len(r.ids) < 4 {
			_ = callerConn.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, frame, err := callerConn.ReadMessage()
			if err != nil {
				r.err = err
				return
			}
			for _, line := range strings.Split(string(frame), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					r.err = err
					return
				}
				if len(m) == 0 {
					r.pings++
					if err := callerConn.WriteMessage(gws.TextMessage, []byte(`{}`)); err != nil {
						r.err = err
						return
					}
					continue
				}
				r.ids = append(r.ids, jsonclient.Num(m["id"]))
			}
		}
	}()
	for _, cmd := range []string{
		`{"id":1,"connect":{"token":"` + token(t, auth.ConnectClaims{User: "caller"}) + `"}}`,
		`{"id":2,"rpc":{"method":"slow"}}` + "\n" + `{"id":3,"rpc":{"method":"after"}}` + "\n" + `{"id":4,"presence_stats":{"channel":"x"}}`,
	} {
		if err := callerConn.WriteMessage(gws.TextMessage, []byte(cmd)); err != nil {
			t.Fatal(err)
		}
	}
	// More slow callers than read workers.
	tok := token(t, auth.ConnectClaims{User: "other-caller"})
	for range 3 {
		conn, err := rawDial(n.url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		for _, cmd := range []string{`{"id":1,"connect":{"token":"` + tok + `"}}`, `{"id":2,"rpc":{"method":"slow"}}`} {
			if err := conn.WriteMessage(gws.TextMessage, []byte(cmd)); err != nil {
				t.Fatal(err)
			}
		}
	}

	start := time.Now()
	var lat []time.Duration
	for i := 0; time.Since(start) < time.Second || i < 20; i++ {
		t0 := time.Now()
		c := n.dial(t)
		c.Connect("u")
		if m := c.Call(`{"id":2,"rpc":{"method":"fast"}}`); jsonclient.Compact(t, m["rpc"]) != `{"data":{"method":"fast"}}` {
			t.Fatalf("fast rpc: %v", m)
		}
		lat = append(lat, time.Since(t0))
		c.Drop()
	}
	if p := p99(lat); p > 50*time.Millisecond {
		t.Fatalf("p99 of %d connect + rpc round trips beside slow RPCs: %v (want under 50ms)", len(lat), p)
	}

	// The caller answered every ping meanwhile (pong timeout 450ms), and
	// its replies come in the order of its commands, after the slow one.
	r := <-callerDone
	if r.err != nil {
		t.Fatalf("caller: %v (replies so far %v)", r.err, r.ids)
	}
	if !slices.Equal(r.ids, []int64{1, 2, 3, 4}) {
		t.Fatalf("reply order %v, want [1 2 3 4]", r.ids)
	}
	if r.pings == 0 {
		t.Fatal("no ping reached the caller while its RPC ran")
	}
}
