package httpstream

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/heraldhq/herald/protocol"
)

// TestSSELineBreaksInData: publication data holding raw CR, CRLF and LF
// (JSON whitespace, valid as it is) reaches SSE and uni_sse subscribers
// (given the server-side subscription news)
// as one event each, whose data is the same JSON value: a raw CR in a
// data line would end it early, and EventSource would split the event.
func TestSSELineBreaksInData(t *testing.T) {
	payloads := []string{"{\"a\":\r\r1}", "{\"a\":\r\n1}", "{\"a\":\n1}", "[1,\r2\n,\r\n3]"}
	e := uniEnv(t)

	bidi := e.open(http.MethodGet, pathSSE+"?cf_connect="+urlEscape(string(commands(t, protocol.TypeJSON, &protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{}}))), "", nil)
	if r := bidi.reply(); r.Connect == nil {
		t.Fatalf("first reply %+v, want the connect result", r)
	}
	uni := e.open(http.MethodPost, pathUniSSE, "application/json", []byte(`{}`))
	if p := uni.push(); p.Connect == nil {
		t.Fatalf("first push %+v, want connect", p)
	}
	await(t, "both clients to subscribe", func() bool { return e.hub.NumSubscriptions() == 2 })

	for _, data := range payloads {
		publish(t, e, "news", data)
	}
	for _, data := range payloads {
		var want any
		if err := json.Unmarshal([]byte(data), &want); err != nil {
			t.Fatal(err)
		}
		r := bidi.reply()
		for r.Push != nil && r.Push.Subscribe != nil {
			r = bidi.reply()
		}
		if r.Push == nil || r.Push.Pub == nil {
			t.Fatalf("sse: reply %+v, want a publication", r)
		}
		sameJSON(t, "sse", r.Push.Pub.Data, want)
		p := uni.push()
		for p.Pub == nil && p.Subscribe != nil {
			p = uni.push()
		}
		if p.Pub == nil {
			t.Fatalf("uni_sse: push %+v, want a publication", p)
		}
		sameJSON(t, "uni_sse", p.Pub.Data, want)
	}
}

func sameJSON(t *testing.T, what string, got []byte, want any) {
	t.Helper()
	var v any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("%s: publication data %q: %v", what, got, err)
	}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("%s: publication data %q = %v, want %v", what, got, v, want)
	}
}
