package hub_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// recoveryNode has namespace rr (force_recovery, history 100) and tt
// (force_recovery, history 3).
func recoveryNode(t *testing.T, cc hub.ClientConfig) *node {
	return startNode(t, hub.Config{Client: cc, Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("rr", hub.NamespaceOptions{AllowSubscribeForClient: true, ForceRecovery: true, HistorySize: 100, HistoryTTL: time.Minute}),
		ns("tt", hub.NamespaceOptions{AllowSubscribeForClient: true, ForceRecovery: true, HistorySize: 3, HistoryTTL: time.Minute}),
	}}})
}

// publishN publishes {"n":i} for i in 1..count through the hub API and
// returns the stream position of the last one.
func publishN(t *testing.T, h *hub.Hub, ch string, count int) engine.StreamPosition {
	t.Helper()
	var sp engine.StreamPosition
	for i := 1; i <= count; i++ {
		var err error
		if sp, err = h.Publish(context.Background(), ch, []byte(`{"n":`+strconv.Itoa(i)+`}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return sp
}

func recoverReq(offset uint64, epoch string) string {
	return fmt.Sprintf(`"recover":true,"offset":%d,"epoch":%q`, offset, epoch)
}

func pubOffsets(t *testing.T, v any) []int64 {
	t.Helper()
	var out []int64
	pubs, _ := v.([]any)
	for _, p := range pubs {
		out = append(out, jsonclient.Num(p.(map[string]any)["offset"]))
	}
	return out
}

func TestRecoverySuccess(t *testing.T) {
	t.Parallel()
	n := recoveryNode(t, hub.ClientConfig{})
	sp := publishN(t, n.hub, "rr:a", 5)
	c := n.dial(t)
	c.Connect("u")
	res := c.MustSubscribe(2, "rr:a", recoverReq(2, sp.Epoch))
	if res["recovered"] != true || res["was_recovering"] != true || jsonclient.Num(res["offset"]) != 2 || res["epoch"] != sp.Epoch {
		t.Fatalf("subscribe result: %v", res)
	}
	if got := fmt.Sprint(pubOffsets(t, res["publications"])); got != "[3 4 5]" {
		t.Fatalf("recovered offsets %s", got)
	}
	p0 := res["publications"].([]any)[0].(map[string]any)
	if jsonclient.Compact(t, p0["data"]) != `{"n":3}` {
		t.Fatalf("recovered publication %v", p0)
	}
	// Live publications continue the stream, once each.
	publishN(t, n.hub, "rr:a", 1)
	if p := jsonclient.PushesOf(c.Drain(), "rr:a", "pub"); len(p) != 1 || jsonclient.Num(p[0]["offset"]) != 6 {
		t.Fatalf("live publications after recovery: %v", p)
	}
}

func TestRecoveryZeroMissed(t *testing.T) {
	t.Parallel()
	n := recoveryNode(t, hub.ClientConfig{})
	sp := publishN(t, n.hub, "rr:a", 3)
	c := n.dial(t)
	c.Connect("u")
	for i, epoch := range []string{sp.Epoch, ""} { // an empty epoch matches any
		ch := "rr:a"
		res := c.MustSubscribe(2+2*i, ch, recoverReq(3, epoch))
		if res["recovered"] != true || res["was_recovering"] != true || jsonclient.Num(res["offset"]) != 3 || res["publications"] != nil {
			t.Fatalf("epoch %q: %v", epoch, res)
		}
		c.Call(`{"id":` + strconv.Itoa(3+2*i) + `,"unsubscribe":{"channel":"rr:a"}}`)
	}
}

func TestRecoveryNotPossible(t *testing.T) {
	t.Parallel()
	n := recoveryNode(t, hub.ClientConfig{RecoveryMaxPublicationLimit: 3})
	r := publishN(t, n.hub, "rr:a", 10)
	tr := publishN(t, n.hub, "tt:a", 10)
	c := n.dial(t)
	c.Connect("u")
	for i, tc := range []struct {
		name, ch, req string
		top           engine.StreamPosition
	}{
		{"gap above recovery_max_publication_limit", "rr:a", recoverReq(2, r.Epoch), r},
		{"epoch mismatch", "rr:a", recoverReq(8, "other-epoch"), r},
		{"history trimmed below the client's offset", "tt:a", recoverReq(2, tr.Epoch), tr},
		{"offset from the future", "rr:a", recoverReq(11, r.Epoch), r},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := c.MustSubscribe(10+2*i, tc.ch, tc.req)
			if res["was_recovering"] != true || res["recovered"] != nil || res["publications"] != nil ||
				jsonclient.Num(res["offset"]) != int64(tc.top.Offset) || res["epoch"] != tc.top.Epoch {
				t.Fatalf("subscribe result %v, want not recovered at the top %+v", res, tc.top)
			}
			c.Call(`{"id":` + strconv.Itoa(11+2*i) + `,"unsubscribe":{"channel":"` + tc.ch + `"}}`)
		})
	}
	t.Run("gap at the limit recovers", func(t *testing.T) {
		res := c.MustSubscribe(30, "rr:a", recoverReq(7, r.Epoch))
		if res["recovered"] != true || fmt.Sprint(pubOffsets(t, res["publications"])) != "[8 9 10]" {
			t.Fatalf("subscribe result %v", res)
		}
	})
}

func TestRecoveryRejectUnrecovered(t *testing.T) {
	t.Parallel()
	n := recoveryNode(t, hub.ClientConfig{})
	sp := publishN(t, n.hub, "rr:a", 3)
	c := n.dial(t)
	c.Connect("u")
	for _, flag := range []int{2, 3} {
		jsonclient.WantError(t, c.Subscribe(2, "rr:a", recoverReq(1, "other-epoch")+`,"flag":`+strconv.Itoa(flag)), 112)
	}
	// The failed subscription left nothing behind.
	if m := c.Call(`{"id":3,"history":{"channel":"rr:a"}}`); jsonclient.ErrorCode(m) != 103 {
		t.Fatalf("history after a refused subscription: %v", m)
	}
	res := c.MustSubscribe(4, "rr:a", recoverReq(1, sp.Epoch)+`,"flag":3`)
	if res["recovered"] != true {
		t.Fatalf("recoverable position with flag 2: %v", res)
	}
}

// TestRecoveryConcurrentPublications subscribes with recovery while
// another goroutine publishes to the channel as fast as it can: the client
// must see every publication after its offset exactly once, in order,
// whether it came in the subscribe result or live.
func TestRecoveryConcurrentPublications(t *testing.T) {
	t.Parallel()
	const before, maxDuring, from = 20, 3000, 10
	n := startNode(t, hub.Config{
		Client: hub.ClientConfig{RecoveryMaxPublicationLimit: 5000},
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, ForceRecovery: true, HistorySize: 5000, HistoryTTL: time.Minute,
		}},
	})
	c := n.dial(t)
	c.Connect("u")
	for round := range 5 {
		ch := "race" + strconv.Itoa(round)
		sp := publishN(t, n.hub, ch, before)
		var (
			wg        sync.WaitGroup
			underway  = make(chan struct{})
			published atomic.Int64
			stop      atomic.Bool
			pubErr    atomic.Value
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < maxDuring && !stop.Load(); i++ {
				if _, err := n.hub.Publish(context.Background(), ch, []byte(`{"n":`+strconv.Itoa(before+i+1)+`}`), hub.PublishOptions{}); err != nil {
					pubErr.Store(err)
					return
				}
				if published.Add(1) == 1 {
					close(underway)
				}
			}
		}()
		select {
		case <-underway:
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: no publication after 5 s (%v)", round, pubErr.Load())
		}
		sentAt := published.Load()
		res := c.MustSubscribe(100+round, ch, recoverReq(from, sp.Epoch))
		repliedAt := published.Load()
		stop.Store(true)
		wg.Wait()
		if err := pubErr.Load(); err != nil {
			t.Fatal(err)
		}
		if res["recovered"] != true {
			t.Fatalf("round %d: not recovered: %v", round, res)
		}
		got := pubOffsets(t, res["publications"])
		t.Logf("round %d: %d publications before subscribing, %d when the reply came, %d recovered, %d in all",
			round, sentAt, repliedAt, len(got), published.Load())
		for _, p := range jsonclient.PushesOf(c.Drain(), ch, "pub") {
			got = append(got, jsonclient.Num(p["offset"]))
		}
		for i, off := range got {
			if off != int64(from+1+i) {
				t.Fatalf("round %d: offsets not consecutive from %d at index %d: %v", round, from+1, i, got)
			}
		}
		if want := before + int(published.Load()) - from; len(got) != want {
			t.Fatalf("round %d: %d publications, want %d", round, len(got), want)
		}
	}
}

// TestPositionedGap loses one publication on its way to the node: a
// positioned client subscription is unsubscribed with 2500 and recovers
// on resubscribe; a server-side one closes the connection with 3010.
func TestPositionedGap(t *testing.T) {
	t.Parallel()
	eng := &lossyEngine{Engine: memory.New(memory.Config{}), drop: func(ch string, sp engine.StreamPosition) bool {
		return sp.Offset == 2 && (ch == "gap:x" || ch == "gap:ss")
	}}
	n := startNode(t, hub.Config{Engine: eng, Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("gap", hub.NamespaceOptions{AllowSubscribeForClient: true, ForcePositioning: true, AllowRecovery: true, HistorySize: 10, HistoryTTL: time.Minute}),
	}}})

	t.Run("client-side subscription", func(t *testing.T) {
		c := n.dial(t)
		c.Connect("u")
		res := c.MustSubscribe(2, "gap:x", `"recoverable":true`)
		epoch := res["epoch"].(string)
		publishN(t, n.hub, "gap:x", 3)
		if m := c.Next(); jsonclient.Num(jsonclient.Path(m, "push", "pub", "offset")) != 1 {
			t.Fatalf("first publication: %v", m)
		}
		m := c.Next()
		if jsonclient.Compact(t, m) != `{"push":{"channel":"gap:x","unsubscribe":{"code":2500,"reason":"insufficient state"}}}` {
			t.Fatalf("want unsubscribe push 2500, got %v", m)
		}
		res = c.MustSubscribe(3, "gap:x", `"recoverable":true,`+recoverReq(1, epoch))
		if res["recovered"] != true || fmt.Sprint(pubOffsets(t, res["publications"])) != "[2 3]" {
			t.Fatalf("resubscribe: %v", res)
		}
		publishN(t, n.hub, "gap:x", 1)
		if p := jsonclient.PushesOf(c.Drain(), "gap:x", "pub"); len(p) != 1 || jsonclient.Num(p[0]["offset"]) != 4 {
			t.Fatalf("live after recovery: %v", p)
		}
	})
	t.Run("server-side subscription", func(t *testing.T) {
		c := n.dial(t)
		c.ConnectToken(token(t, auth.ConnectClaims{User: "u", Channels: []string{"gap:ss"}}))
		publishN(t, n.hub, "gap:ss", 3)
		c.ExpectClose(3010, "insufficient state")
	})
}

// TestPositionedEpochChange lets a channel's stream expire (on the
// engine's clock) while a positioned client is subscribed: the next
// publication starts a new epoch, and the client is unsubscribed with
// 2500 instead of silently continuing on another stream.
func TestPositionedEpochChange(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	eng := memory.New(memory.Config{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	n := startNode(t, hub.Config{Engine: eng, Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("ep", hub.NamespaceOptions{
			AllowSubscribeForClient: true, ForcePositioning: true,
			HistorySize: 10, HistoryTTL: time.Minute, HistoryMetaTTL: time.Minute,
		}),
	}}})
	c := n.dial(t)
	c.Connect("u")
	res := c.MustSubscribe(2, "ep:x", "")
	first := publishN(t, n.hub, "ep:x", 1)
	if first.Epoch != res["epoch"] || first.Offset != 1 {
		t.Fatalf("first publication %+v, subscribed at %v", first, res)
	}
	if p := jsonclient.PushesOf(c.Drain(), "ep:x", "pub"); len(p) != 1 {
		t.Fatalf("first publication: %v", p)
	}
	clock.Add(int64(2 * time.Minute))
	second := publishN(t, n.hub, "ep:x", 1)
	if second.Epoch == first.Epoch || second.Offset != 1 {
		t.Fatalf("want a new stream, got %+v after %+v", second, first)
	}
	if m := c.Next(); jsonclient.Compact(t, m) != `{"push":{"channel":"ep:x","unsubscribe":{"code":2500,"reason":"insufficient state"}}}` {
		t.Fatalf("want unsubscribe push 2500, got %v", m)
	}
}
