package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/protocol"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// fieldsNode serves namespace fl, where every subscribe option a client
// may ask for is allowed, so that each request field can be seen acting.
// Its OnSubscribe returns the request's data as the result's data for the
// channel fl:data, and defers to the namespace for every other.
func fieldsNode(t *testing.T) *node {
	return startNode(t, hub.Config{
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{ns("fl", hub.NamespaceOptions{
			AllowSubscribeForClient: true, AllowPublishForSubscriber: true, AllowPublishForClient: true,
			AllowPresenceForSubscriber: true, Presence: true, JoinLeave: true,
			HistorySize: 10, HistoryTTL: time.Minute, AllowPositioning: true, AllowRecovery: true,
			AllowedDeltaTypes: []string{hub.DeltaFossil}, AllowTagsFilter: true,
		})}},
		Handlers: hub.Handlers{OnSubscribe: func(_ context.Context, _ *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
			if ev.Channel == "fl:data" {
				return hub.SubscribeReply{Data: ev.Data}, nil
			}
			return hub.SubscribeReply{}, hub.ErrUseDefault
		}},
	})
}

// TestNothingSilentlyIgnored walks every field of SubscribeRequest and
// PublishRequest as client.proto defines them and checks that each is
// either honoured (a check of what it does) or refused with the protocol's
// error. A field added to client.proto fails this test until it is
// classified here, so that no field a client sends is taken for something
// else.
func TestNothingSilentlyIgnored(t *testing.T) {
	t.Parallel()
	n := fieldsNode(t)
	conn := func(t *testing.T) *rawClient {
		c := n.dial(t)
		c.Connect("u")
		return c
	}
	sub := map[string]func(t *testing.T){
		"channel": func(t *testing.T) { // the publication reaches the channel's subscriber
			c := conn(t)
			c.MustSubscribe(2, "fl:ch", "")
			publishN(t, n.hub, "fl:ch", 1)
			if len(jsonclient.PushesOf(c.Drain(), "fl:ch", "pub")) != 1 {
				t.Fatal("no publication")
			}
		},
		"token": func(t *testing.T) { // private channel: admitted by a token, refused (103) without a valid one
			c := conn(t)
			jsonclient.WantError(t, c.Subscribe(2, "$fl:p", `"token":"nope"`), 103)
			c.MustSubscribe(3, "$fl:p", `"token":"`+subToken(t, auth.SubscribeClaims{User: "u", Channel: "$fl:p"})+`"`)
		},
		"recover": func(t *testing.T) { recoverCheck(t, n, conn(t)) },
		"epoch": func(t *testing.T) { // a stale epoch fails recovery
			c := conn(t)
			publishN(t, n.hub, "fl:ep", 1)
			if res := c.MustSubscribe(2, "fl:ep", `"recoverable":true,`+recoverReq(0, "other")); res["recovered"] == true {
				t.Fatalf("recovered across epochs: %v", res)
			}
		},
		"offset": func(t *testing.T) { recoverCheck(t, n, conn(t)) },
		"data": func(t *testing.T) { // reaches the application's OnSubscribe
			if res := conn(t).MustSubscribe(2, "fl:data", `"data":{"x":1}`); jsonclient.Compact(t, res["data"]) != `{"x":1}` {
				t.Fatalf("result %v", res)
			}
		},
		"positioned": func(t *testing.T) {
			if res := conn(t).MustSubscribe(2, "fl:pos", `"positioned":true`); res["positioned"] != true || res["recoverable"] == true {
				t.Fatalf("result %v", res)
			}
		},
		"recoverable": func(t *testing.T) {
			if res := conn(t).MustSubscribe(2, "fl:rec", `"recoverable":true`); res["recoverable"] != true {
				t.Fatalf("result %v", res)
			}
		},
		"join_leave": func(t *testing.T) {
			c := conn(t)
			c.MustSubscribe(2, "fl:jl", `"join_leave":true`)
			conn(t).MustSubscribe(2, "fl:jl", "")
			testenv.Eventually(t, "join push", 5*time.Second, func() bool { return len(jsonclient.PushesOf(c.Drain(), "fl:jl", "join")) > 0 })
		},
		"delta": func(t *testing.T) {
			if res := conn(t).MustSubscribe(2, "fl:d", `"delta":"fossil"`); res["delta"] != true {
				t.Fatalf("result %v", res)
			}
		},
		"tf": func(t *testing.T) {
			c := conn(t)
			c.MustSubscribe(2, "fl:tf", `"tf":{"key":"k","cmp":"eq","val":"a"}`)
			publishTagged(t, n.hub, "fl:tf", 1, map[string]string{"k": "b"})
			publishTagged(t, n.hub, "fl:tf", 2, map[string]string{"k": "a"})
			if got := pubNs(t, jsonclient.PushesOf(c.Drain(), "fl:tf", "pub")); len(got) != 1 || got[0] != 2 {
				t.Fatalf("filtered delivery %v", got)
			}
		},
		"flag": func(t *testing.T) { // bit 2: an unrecoverable position is error 112; bit 1, compaction, sets no id where the namespace does not allow it (compaction_test.go)
			c := conn(t)
			sp := publishN(t, n.hub, "fl:fg", 1)
			jsonclient.WantError(t, c.Subscribe(2, "fl:fg", `"recoverable":true,"flag":3,`+recoverReq(5, sp.Epoch)), 112)
			if res := c.MustSubscribe(3, "fl:fg2", `"flag":1`); res["id"] != nil {
				t.Fatalf("result %v", res)
			}
		},
		"type": func(t *testing.T) { // map kinds on a stream channel (honoured on map channels: map tests), shared poll and unknown types: error 107
			c := conn(t)
			for i, typ := range []string{"1", "2", "3", "4", "99"} {
				jsonclient.WantError(t, c.Subscribe(2+i, "fl:ty", `"type":`+typ), 107)
			}
		},
		"phase":  func(t *testing.T) { jsonclient.WantError(t, conn(t).Subscribe(2, "fl:x", `"phase":2`), 107) },
		"cursor": func(t *testing.T) { jsonclient.WantError(t, conn(t).Subscribe(2, "fl:x", `"cursor":"c"`), 107) },
		"limit":  func(t *testing.T) { jsonclient.WantError(t, conn(t).Subscribe(2, "fl:x", `"limit":10`), 107) },
		"asc":    func(t *testing.T) { jsonclient.WantError(t, conn(t).Subscribe(2, "fl:x", `"asc":true`), 107) },
	}
	pub := map[string]func(t *testing.T){
		"channel": func(t *testing.T) { publishCheck(t, conn(t), "fl:pc") },
		"data":    func(t *testing.T) { publishCheck(t, conn(t), "fl:pd") },
		"type": func(t *testing.T) { // a map publication to a stream channel (honoured on map channels: map tests): error 107
			jsonclient.WantError(t, conn(t).Call(`{"id":2,"publish":{"channel":"fl:pt","data":{},"type":1}}`), 107)
		},
		"key": func(t *testing.T) {
			jsonclient.WantError(t, conn(t).Call(`{"id":2,"publish":{"channel":"fl:pk","data":{},"key":"k"}}`), 107)
		},
		"removed": func(t *testing.T) {
			jsonclient.WantError(t, conn(t).Call(`{"id":2,"publish":{"channel":"fl:pr","data":{},"removed":true}}`), 107)
		},
	}
	walkFields(t, &protocol.SubscribeRequest{}, sub)
	walkFields(t, &protocol.PublishRequest{}, pub)
}

// walkFields runs the check of every field of m's message type and fails
// for a field without one, or a check for a field that does not exist.
func walkFields(t *testing.T, m proto.Message, checks map[string]func(t *testing.T)) {
	t.Helper()
	d := m.ProtoReflect().Descriptor()
	fields := d.Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		check, ok := checks[string(f.Name())]
		if !ok {
			t.Errorf("%s.%s (field %d) is neither honoured nor refused: classify it in TestNothingSilentlyIgnored", d.Name(), f.Name(), f.Number())
			continue
		}
		t.Run(string(d.Name())+"."+string(f.Name()), check)
	}
	for name := range checks {
		if fields.ByName(protoreflect.Name(name)) == nil {
			t.Errorf("%s has no field %s", d.Name(), name)
		}
	}
}

// recoverCheck: a client that missed publications gets them back.
func recoverCheck(t *testing.T, n *node, c *rawClient) {
	t.Helper()
	ch := "fl:rc" + t.Name()[len(t.Name())-3:]
	sp := publishN(t, n.hub, ch, 3)
	res := c.MustSubscribe(2, ch, `"recoverable":true,`+recoverReq(1, sp.Epoch))
	if res["recovered"] != true || len(res["publications"].([]any)) != 2 {
		t.Fatalf("result %v", res)
	}
}

// publishCheck: a client's publication reaches the channel with its data.
func publishCheck(t *testing.T, c *rawClient, ch string) {
	t.Helper()
	c.MustSubscribe(2, ch, "")
	if m := c.Call(`{"id":3,"publish":{"channel":"` + ch + `","data":{"v":7}}}`); m["error"] != nil {
		t.Fatalf("publish: %v", m)
	}
	p := jsonclient.PushesOf(c.Drain(), ch, "pub")
	if len(p) != 1 || jsonclient.Compact(t, p[0]["data"]) != `{"v":7}` {
		t.Fatalf("publications %v", p)
	}
}
