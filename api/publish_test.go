package api_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api"
)

func TestPublishDelivers(t *testing.T) {
	n := startNode(t, api.Config{})
	c := n.dial(t, "alice")
	c.subscribe("chat")
	epoch := epochOf(t, n, "chat")

	n.expect(t, "publish", `{"channel":"chat","data":{"text":"hi <b>"},"tags":{"k":"v"}}`,
		`{"result":{"offset":1,"epoch":"`+epoch+`"}}`)
	if got, want := c.Read(), `{"push":{"channel":"chat","pub":{"data":{"text":"hi <b>"},"offset":1,"tags":{"k":"v"}}}}`; got != want {
		t.Fatalf("push:\n got %s\nwant %s", got, want)
	}

	// skip_history delivers without a stream position.
	n.expect(t, "publish", `{"channel":"chat","data":2,"skip_history":true}`, `{"result":{}}`)
	if got, want := c.Read(), `{"push":{"channel":"chat","pub":{"data":2}}}`; got != want {
		t.Fatalf("skip_history push:\n got %s\nwant %s", got, want)
	}
	n.expect(t, "history", `{"channel":"chat","limit":-1}`,
		`{"result":{"publications":[{"data":{"text":"hi <b>"},"offset":1,"tags":{"k":"v"}}],"epoch":"`+epoch+`","offset":1}}`)

	// A channel without history answers an empty result.
	p := n.dial(t, "bob")
	p.subscribe("plain:room")
	n.expect(t, "publish", `{"channel":"plain:room","data":[1,2]}`, `{"result":{}}`)
	if got, want := p.Read(), `{"push":{"channel":"plain:room","pub":{"data":[1,2]}}}`; got != want {
		t.Fatalf("plain push:\n got %s\nwant %s", got, want)
	}
	c.expectOpen()
}

func TestPublishB64Data(t *testing.T) {
	n := startNode(t, api.Config{})
	c := n.dial(t, "alice")
	c.subscribe("plain:room")
	// b64data wins over data; JSON text sent as base64 reaches JSON
	// clients as it is.
	b64 := base64.StdEncoding.EncodeToString([]byte(`{"from":"b64"}`))
	n.expect(t, "publish", `{"channel":"plain:room","data":{"from":"data"},"b64data":"`+b64+`"}`, `{"result":{}}`)
	if got, want := c.Read(), `{"push":{"channel":"plain:room","pub":{"data":{"from":"b64"}}}}`; got != want {
		t.Fatalf("push:\n got %s\nwant %s", got, want)
	}
}

func TestPublishErrors(t *testing.T) {
	n := startNode(t, api.Config{})
	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{`{"data":1}`, 107, "channel required"},
		{`{"channel":"","data":1}`, 107, "channel required"},
		{`{"channel":"chat"}`, 107, "data required (or b64data)"},
		{`{"channel":"chat","b64data":"!!"}`, 107, "b64data: illegal base64 data at input byte 0"},
		{`{"channel":"nope:chat","data":1}`, 102, `unknown channel: namespace "nope" is not configured`},
		{`{"channel":"$nope:chat","data":1}`, 102, `unknown channel: namespace "nope" is not configured`},
		{`{"channel":"strict:ABC","data":1}`, 107, `channel: invalid name "strict:ABC" (too long, not ASCII, with a control character, or not matching the namespace's channel_regex)`},
		{`{"channel":"` + strings.Repeat("c", 256) + `","data":1}`, 107, ""},
	} {
		got := n.expectError(t, "publish", c.body, c.code)
		if c.msg != "" && got != c.msg {
			t.Errorf("%s: message %q, want %q", c.body, got, c.msg)
		}
	}
}

// TestPublishBinaryData: in the default publication_data_format, bytes
// that are not JSON are taken while no JSON client subscribes to the
// channel, as Centrifugo takes them, and refused with error 107 once one
// does, instead of reaching a subscriber that cannot decode them.
func TestPublishBinaryData(t *testing.T) {
	n := startNode(t, api.Config{})
	binary := `{"channel":"chat","b64data":"` + base64.StdEncoding.EncodeToString([]byte("x")) + `"}`
	badUTF8 := "{\"channel\":\"chat\",\"data\":\"\xff\"}"
	n.expect(t, "publish", binary, `{"result":{"offset":1,"epoch":"`+epochOf(t, n, "chat")+`"}}`)
	c := n.dial(t, "alice")
	c.subscribe("chat")
	for _, body := range []string{binary, badUTF8} {
		if got := n.expectError(t, "publish", body, 107); got != jsonSubscribers {
			t.Errorf("%s: message %q, want %q", body, got, jsonSubscribers)
		}
	}
}

const jsonSubscribers = "bad request: data is not valid JSON in UTF-8 and JSON clients subscribe to this channel, which could not decode it (set publication_data_format: binary for a channel of Protobuf clients only)"

func TestBroadcast(t *testing.T) {
	n := startNode(t, api.Config{})
	a := n.dial(t, "alice")
	a.subscribe("news")
	b := n.dial(t, "bob")
	b.subscribe("plain:news")
	epoch := epochOf(t, n, "news")

	n.expect(t, "broadcast", `{"channels":["news","plain:news","nope:x",""],"data":{"n":1}}`,
		`{"result":{"responses":[`+
			`{"result":{"offset":1,"epoch":"`+epoch+`"}},`+
			`{"result":{}},`+
			`{"error":{"code":102,"message":"unknown channel: namespace \"nope\" is not configured"}},`+
			`{"error":{"code":107,"message":"channels[3]: channel required"}}]}}`)
	if got, want := a.Read(), `{"push":{"channel":"news","pub":{"data":{"n":1},"offset":1}}}`; got != want {
		t.Fatalf("news push: %s, want %s", got, want)
	}
	if got, want := b.Read(), `{"push":{"channel":"plain:news","pub":{"data":{"n":1}}}}`; got != want {
		t.Fatalf("plain:news push: %s, want %s", got, want)
	}

	if got := n.expectError(t, "broadcast", `{"data":1}`, 107); got != "channels required" {
		t.Errorf("no channels: %q", got)
	}
	if got := n.expectError(t, "broadcast", `{"channels":["news"]}`, 107); got != "data required (or b64data)" {
		t.Errorf("no data: %q", got)
	}
}

// TestBroadcastMany runs more channels than the concurrency bound, so
// that the bounded fan-out is exercised under -race.
func TestBroadcastMany(t *testing.T) {
	n := startNode(t, api.Config{})
	var chs []string
	for i := range 150 {
		chs = append(chs, fmt.Sprintf(`"plain:c%d"`, i))
	}
	body := n.call(t, "broadcast", `{"channels":[`+strings.Join(chs, ",")+`],"data":1}`)
	if want := `{"result":{"responses":[` + strings.TrimSuffix(strings.Repeat(`{"result":{}},`, 150), ",") + `]}}`; body != want {
		t.Fatalf("got %s", body)
	}
}
