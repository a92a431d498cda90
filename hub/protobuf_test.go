package hub_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/protocol"
)

func protobufConfig() hub.Config {
	return hub.Config{Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
		AllowSubscribeForClient: true, AllowPublishForSubscriber: true,
		AllowHistoryForSubscriber: true,
		HistorySize:               10, HistoryTTL: time.Minute,
	}}}
}

func TestProtobufRoundTrip(t *testing.T) {
	t.Parallel()
	cfg := protobufConfig()
	cfg.Channels.WithoutNamespace.PublicationDataFormat = hub.DataFormatBinary
	n := startNode(t, cfg)
	c := n.dialProtobuf(t)
	res := c.Connect("pb")
	if !uuidRe.MatchString(res.Client) || res.Ping != 25 || !res.Pong {
		t.Fatalf("connect result: %v", res)
	}
	sub := c.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "bin", Recoverable: true, Flag: 1}})
	if sub.Subscribe == nil || !sub.Subscribe.Recoverable || !sub.Subscribe.Positioned || sub.Subscribe.Epoch == "" {
		t.Fatalf("subscribe: %v", sub)
	}
	// Binary payloads are fine on a protobuf connection.
	payload := []byte{0x00, 0xff, 0x10, '\n'}
	c.Send(&protocol.Command{Id: 3, Publish: &protocol.PublishRequest{Channel: "bin", Data: payload}})
	push := c.Next()
	if push.Push == nil || push.Push.Channel != "bin" || push.Push.Pub == nil {
		t.Fatalf("want publication push, got %v", push)
	}
	p := push.Push.Pub
	if !bytes.Equal(p.Data, payload) || p.Offset != 1 || p.Info.GetUser() != "pb" || p.Info.GetClient() != res.Client {
		t.Fatalf("publication: %v", p)
	}
	if r := c.Next(); r.Id != 3 || r.Publish == nil || r.Error != nil {
		t.Fatalf("publish reply: %v", r)
	}
	h := c.Call(&protocol.Command{Id: 4, History: &protocol.HistoryRequest{Channel: "bin", Limit: -1}})
	if h.History == nil || len(h.History.Publications) != 1 || !bytes.Equal(h.History.Publications[0].Data, payload) ||
		h.History.Offset != 1 || h.History.Epoch != sub.Subscribe.Epoch {
		t.Fatalf("history: %v", h)
	}
	if r := c.Call(&protocol.Command{Id: 5, Subscribe: &protocol.SubscribeRequest{Channel: "bin"}}); r.Error.GetCode() != 105 {
		t.Fatalf("second subscribe: %v", r)
	}
	if r := c.Call(&protocol.Command{Id: 6, Unsubscribe: &protocol.UnsubscribeRequest{Channel: "bin"}}); r.Unsubscribe == nil {
		t.Fatalf("unsubscribe: %v", r)
	}
	// Recovery on protobuf: the missed binary publication comes back.
	if _, err := n.hub.Publish(t.Context(), "bin", []byte{1, 2, 3}, hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	rec := c.Call(&protocol.Command{Id: 7, Subscribe: &protocol.SubscribeRequest{
		Channel: "bin", Recoverable: true, Recover: true, Offset: 1, Epoch: sub.Subscribe.Epoch,
	}})
	if rec.Subscribe == nil || !rec.Subscribe.Recovered || len(rec.Subscribe.Publications) != 1 ||
		rec.Subscribe.Publications[0].Offset != 2 || !bytes.Equal(rec.Subscribe.Publications[0].Data, []byte{1, 2, 3}) {
		t.Fatalf("recovery: %v", rec)
	}
}

func TestProtobufBatchedCommands(t *testing.T) {
	t.Parallel()
	n := startNode(t, protobufConfig())
	n.hub.LengthenWriteHolds() // what a loaded machine runs past 10 ms still shares the frame
	c := n.dialProtobuf(t)
	c.Send(
		&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Token: token(t, auth.ConnectClaims{User: "u"})}},
		&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "a"}},
		&protocol.Command{Id: 3, Rpc: &protocol.RPCRequest{Method: "x"}},
	)
	// All replies of one frame come back in one frame, in order.
	replies := c.ReadFrame()
	if len(replies) != 3 || replies[0].Connect == nil || replies[1].Subscribe == nil || replies[2].Error.GetCode() != 108 {
		t.Fatalf("replies: %v", replies)
	}
}

func TestMixedProtocolSubscribers(t *testing.T) {
	t.Parallel()
	n := startNode(t, protobufConfig())
	js := n.dial(t)
	js.Connect("json")
	js.MustSubscribe(2, "mix", "")
	pb := n.dialProtobuf(t)
	pb.Connect("proto")
	if r := pb.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "mix"}}); r.Subscribe == nil {
		t.Fatalf("subscribe: %v", r)
	}

	// JSON publisher: the protobuf subscriber gets the JSON bytes as sent.
	js.Call(`{"id":3,"publish":{"channel":"mix","data":{"a": 1}}}`)
	if r := pb.Next(); r.Push.GetPub() == nil || string(r.Push.Pub.Data) != `{"a": 1}` || r.Push.Pub.Info.GetUser() != "json" || r.Push.Pub.Offset != 1 {
		t.Fatalf("protobuf subscriber: %v", r)
	}
	// Protobuf publisher with a JSON payload: the JSON subscriber gets it
	// embedded.
	pb.Call(&protocol.Command{Id: 3, Publish: &protocol.PublishRequest{Channel: "mix", Data: []byte(`{"b":2}`)}})
	msgs := js.Drain()
	p := jsonclient.PushesOf(msgs, "mix", "pub")
	if len(p) != 2 || jsonclient.Compact(t, p[1]["data"]) != `{"b":2}` || jsonclient.Path(p[1], "info", "user") != "proto" || jsonclient.Num(p[1]["offset"]) != 2 {
		t.Fatalf("json subscriber: %v", msgs)
	}
	if r := pb.Next(); r.Push.GetPub().GetOffset() != 2 {
		t.Fatalf("protobuf publisher's own publication: %v", r)
	}

	// Bytes that are not JSON are refused at publish time while a JSON
	// client subscribes (the default format): no subscriber loses anything.
	r := pb.Call(&protocol.Command{Id: 4, Publish: &protocol.PublishRequest{Channel: "mix", Data: []byte("x")}})
	if r.Error == nil || r.Error.Code != 107 || !strings.Contains(r.Error.Message, "valid JSON") {
		t.Fatalf("non-JSON publication: want error 107 naming JSON, got %v", r)
	}
	pb.Call(&protocol.Command{Id: 5, Publish: &protocol.PublishRequest{Channel: "mix", Data: []byte(`{"c":3}`)}})
	if p := jsonclient.PushesOf(js.Drain(), "mix", "pub"); len(p) != 1 || jsonclient.Num(p[0]["offset"]) != 3 {
		t.Fatalf("the JSON subscriber keeps its subscription and the stream has no hole: %v", p)
	}
}

// TestPublicationDataFormat: what a namespace carries is checked when data
// enters it, from clients and the server API, so that nothing published can
// cost a subscriber its subscription later.
func TestPublicationDataFormat(t *testing.T) {
	t.Parallel()
	cfg := protobufConfig()
	opts := cfg.Channels.WithoutNamespace
	obj, bin, jsn := opts, opts, opts
	obj.PublicationDataFormat = hub.DataFormatJSONObject
	bin.PublicationDataFormat = hub.DataFormatBinary
	jsn.PublicationDataFormat = hub.DataFormatJSON
	cfg.Channels.Namespaces = []hub.Namespace{{Name: "obj", NamespaceOptions: obj}, {Name: "bin", NamespaceOptions: bin}, {Name: "json", NamespaceOptions: jsn}}
	n := startNode(t, cfg)
	ctx := t.Context()

	for _, tc := range []struct {
		ch   string
		data string
		ok   bool
	}{
		{"plain", "", false},        // the default takes non-empty data, as Centrifugo's
		{"plain", "x", true},        // any bytes while no JSON client subscribes
		{"plain", "\"\xff\"", true}, // invalid UTF-8 inside a JSON string
		{"plain", "[1]", true},
		{"json:a", "x", false},
		{"json:a", "\"\xff\"", false},
		{"json:a", "[1]", true},
		{"obj:a", "[1]", false},
		{"obj:a", ` {"a":1}`, true},
		{"bin:a", "\xff\x00", true},
	} {
		_, err := n.hub.Publish(ctx, tc.ch, []byte(tc.data), hub.PublishOptions{})
		var he *hub.Error
		if tc.ok != (err == nil) || (!tc.ok && (!errors.As(err, &he) || he.Code != 107)) {
			t.Errorf("API publish %q to %s: ok=%v, got %v", tc.data, tc.ch, tc.ok, err)
		}
	}

	// A JSON client cannot decode a binary channel: refused up front.
	js := n.dial(t)
	js.Connect("json")
	m := js.Subscribe(2, "bin:a", "")
	if jsonclient.ErrorCode(m) != 107 || !strings.Contains(jsonclient.Path(m, "error", "message").(string), "Protobuf") {
		t.Fatalf("JSON client subscribing to a binary channel: %v", m)
	}
	// Nor does the server API subscribe it there: the next push is the
	// subscription to the channel it can read.
	for _, ch := range []string{"bin:a", "obj:a"} {
		if err := n.hub.SubscribeUser(ctx, "json", ch, "", hub.SubscribeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if p := js.Next(); jsonclient.Path(p, "push", "channel") != "obj:a" || jsonclient.Path(p, "push", "subscribe") == nil {
		t.Fatalf("after server API subscriptions to bin:a and obj:a: %v", p)
	}
	pb := n.dialProtobuf(t)
	pb.Connect("proto")
	if r := pb.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "bin:a", Recover: true}}); r.Subscribe == nil {
		t.Fatalf("protobuf subscribe to a binary channel: %v", r)
	}
	pb.Call(&protocol.Command{Id: 3, Publish: &protocol.PublishRequest{Channel: "bin:a", Data: []byte{0xff, 0x00}}})
	if r := pb.Next(); !bytes.Equal(r.Push.GetPub().GetData(), []byte{0xff, 0x00}) {
		t.Fatalf("binary publication: %v", r)
	}
}

// TestLegacyBinaryDataInJSONChannel: data that reached a JSON channel's
// stream before the check (written to the engine directly, or by an older
// version) is skipped for JSON clients in delivery, history and recovery,
// never a reason to close them.
func TestLegacyBinaryDataInJSONChannel(t *testing.T) {
	t.Parallel()
	cfg := protobufConfig()
	cfg.Channels.WithoutNamespace.ForceRecovery = true
	n := startNode(t, cfg)
	ctx := t.Context()
	first, err := n.hub.Publish(ctx, "legacy", []byte(`{"n":1}`), hub.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := n.dial(t)
	c.Connect("u")
	c.MustSubscribe(2, "legacy", "")
	opts := engine.PublishOptions{HistorySize: 10, HistoryTTL: time.Minute}
	if _, err := n.hub.Engine().Publish(ctx, "legacy", &engine.Publication{Data: []byte{0xff}}, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := n.hub.Publish(ctx, "legacy", []byte(`{"n":3}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := jsonclient.PushesOf(c.Drain(), "legacy", "pub"); len(p) != 1 || jsonclient.Num(p[0]["offset"]) != 3 {
		t.Fatalf("live delivery: want only offset 3, got %v", p)
	}
	h := c.Call(`{"id":3,"history":{"channel":"legacy","limit":-1}}`)
	if pubs, _ := jsonclient.Path(h, "history", "publications").([]any); len(pubs) != 2 {
		t.Fatalf("history: want the 2 JSON publications, got %v", h)
	}
	r := n.dial(t)
	r.Connect("u2")
	m := r.Call(`{"id":2,"subscribe":{"channel":"legacy",` + recoverReq(first.Offset, first.Epoch) + `}}`)
	if pubs, _ := jsonclient.Path(m, "subscribe", "publications").([]any); jsonclient.Path(m, "subscribe", "recovered") != true || len(pubs) != 1 {
		t.Fatalf("recovery: want recovered with offset 3 only, got %v", m)
	}
	c.Call(`{"id":4,"presence_stats":{"channel":"legacy"}}`) // still connected
}

// TestBinaryDataInDefaultNamespace: in the default format a Protobuf
// client publishes any bytes, as with Centrifugo, while only Protobuf
// clients subscribe; once a JSON client subscribes, such data is refused
// with error 107 saying why, from clients and the server API alike, and
// JSON data still goes through.
func TestBinaryDataInDefaultNamespace(t *testing.T) {
	t.Parallel()
	cfg := protobufConfig()
	cfg.Channels.WithoutNamespace.AllowPublishForClient = true
	n := startNode(t, cfg)
	ctx := t.Context()
	pub := n.dialProtobuf(t)
	pub.Connect("publisher")
	sub := n.dialProtobuf(t)
	sub.Connect("subscriber")
	if r := sub.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "bin"}}); r.Subscribe == nil {
		t.Fatalf("subscribe: %v", r)
	}
	if r := pub.Call(&protocol.Command{Id: 2, Publish: &protocol.PublishRequest{Channel: "bin", Data: []byte("boom")}}); r.Error != nil {
		t.Fatalf("binary publish with Protobuf subscribers only: %v", r.Error)
	}
	if r := sub.Next(); string(r.Push.GetPub().GetData()) != "boom" {
		t.Fatalf("protobuf subscriber: %v", r)
	}
	if _, err := n.hub.Publish(ctx, "bin", []byte{0xff, 0x00}, hub.PublishOptions{}); err != nil {
		t.Fatalf("API binary publish with Protobuf subscribers only: %v", err)
	}
	if r := sub.Next(); !bytes.Equal(r.Push.GetPub().GetData(), []byte{0xff, 0x00}) {
		t.Fatalf("protobuf subscriber, API publication: %v", r)
	}

	js := n.dial(t)
	js.Connect("json")
	js.MustSubscribe(2, "bin", "")
	r := pub.Call(&protocol.Command{Id: 3, Publish: &protocol.PublishRequest{Channel: "bin", Data: []byte("boom")}})
	if r.Error == nil || r.Error.Code != 107 || !strings.Contains(r.Error.Message, "JSON clients subscribe") {
		t.Fatalf("binary publish with a JSON subscriber: want error 107 saying why, got %v", r)
	}
	var he *hub.Error
	if _, err := n.hub.Publish(ctx, "bin", []byte{0xff, 0x00}, hub.PublishOptions{}); !errors.As(err, &he) || he.Code != 107 {
		t.Fatalf("API binary publish with a JSON subscriber: want error 107, got %v", err)
	}
	if r := pub.Call(&protocol.Command{Id: 4, Publish: &protocol.PublishRequest{Channel: "bin", Data: []byte(`{"ok":1}`)}}); r.Error != nil {
		t.Fatalf("JSON publish with a JSON subscriber: %v", r.Error)
	}
	if p := jsonclient.PushesOf([]map[string]any{js.Next()}, "bin", "pub"); len(p) != 1 || jsonclient.Num(p[0]["offset"]) != 3 {
		t.Fatalf("JSON subscriber: %v", p)
	}
}
