package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api"
)

// legacy POSTs body to the single endpoint with the test key, requires
// 200, and returns the body.
func (n *node) legacy(t *testing.T, body string) string {
	t.Helper()
	r := n.doRaw(t, http.MethodPost, n.apiURL+"/", body, "X-API-Key", testKey)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("POST /api %s: %d %q", body, r.status, r.body)
	}
	return r.body
}

// TestLegacyEndpoint: POST /api with {"method","params"} runs the method
// of /api/<method>, by name in any case or by Centrifugo's enum number,
// several commands per body answered in order with their ids.
func TestLegacyEndpoint(t *testing.T) {
	n := startNode(t, api.Config{})
	c := n.dial(t, "alice")
	c.subscribe("chat")
	epoch := epochOf(t, n, "chat")

	if got, want := n.legacy(t, `{"method":"publish","params":{"channel":"chat","data":{"text":"hi"}}}`),
		`{"result":{"offset":1,"epoch":"`+epoch+`"}}`; got != want {
		t.Fatalf("publish:\n got %s\nwant %s", got, want)
	}
	if got, want := c.Read(), `{"push":{"channel":"chat","pub":{"data":{"text":"hi"},"offset":1}}}`; got != want {
		t.Fatalf("push:\n got %s\nwant %s", got, want)
	}

	got := n.legacy(t, `{"id":1,"method":"PRESENCE_STATS","params":{"channel":"chat"}}`+"\n"+
		`{"id":2,"method":6,"params":{"channel":"chat","limit":-1}}`+"\n"+
		`{"id":3,"method":"publish","params":{"channel":"chat"}}`+"\n"+
		`{"id":4,"method":"nope"}`+"\n"+
		`{"id":5,"method":"device_list","params":{}}`+"\n"+
		`{"id":6,"method":"publish","params":{"channel":5,"data":1}}`+"\n"+
		`{"id":7,"method":13}`+"\n"+
		`{"id":8}`)
	want := strings.Join([]string{
		`{"id":1,"result":{"num_clients":1,"num_users":1}}`,
		`{"id":2,"result":{"publications":[{"data":{"text":"hi"},"offset":1}],"epoch":"` + epoch + `","offset":1}}`,
		`{"id":3,"error":{"code":107,"message":"data required (or b64data)"}}`,
		`{"id":4,"error":{"code":104,"message":"method not found: \"nope\""}}`,
		`{"id":5,"error":{"code":108,"message":"not available: device_list: Herald does not have this method"}}`,
		`{"id":6,"error":{"code":107,"message":"channel: want string, got number"}}`,
		`{"id":7,"error":{"code":104,"message":"method not found: 13 (want a method name such as \"publish\", or its number)"}}`,
		`{"id":8,"error":{"code":104,"message":"method required: a method name such as \"publish\", or its number"}}`,
	}, "\n")
	if got != want {
		t.Fatalf("commands:\n got %s\nwant %s", got, want)
	}
	c.expectOpen()
}

// TestLegacyEndpointRefusals: no key, an empty body, a body that is not
// JSON and too many commands are refused, and nothing runs.
func TestLegacyEndpointRefusals(t *testing.T) {
	n := startNode(t, api.Config{MaxBatchCommands: 2})
	c := n.dial(t, "alice")
	c.subscribe("chat")
	pub := `{"method":"publish","params":{"channel":"chat","data":1}}`
	if r := n.doRaw(t, http.MethodPost, n.apiURL+"/", pub); r.status != http.StatusUnauthorized {
		t.Fatalf("without a key: %d %q", r.status, r.body)
	}
	for _, body := range []string{"", "  \n", pub + "\n{not json"} {
		if r := n.doRaw(t, http.MethodPost, n.apiURL+"/", body, "X-API-Key", testKey); r.status != http.StatusBadRequest {
			t.Fatalf("body %q: %d %q", body, r.status, r.body)
		}
	}
	got := n.legacy(t, pub+pub+pub)
	if want := `{"error":{"code":107,"message":"3 commands, more than the limit of 2 (http_api.max_batch_commands): send them in several requests"}}`; got != want {
		t.Fatalf("three commands:\n got %s\nwant %s", got, want)
	}
	n.expect(t, "history", `{"channel":"chat"}`, `{"result":{"publications":[],"epoch":"`+epochOf(t, n, "chat")+`","offset":0}}`)
	c.expectOpen()
}

// TestLegacyEndpointResponseLimit: the replies are bounded by
// MaxBatchResponseSize as a batch's are: the reply that would pass it is
// error 106, and later commands do not run.
func TestLegacyEndpointResponseLimit(t *testing.T) {
	n := startNode(t, api.Config{MaxBatchResponseSize: 100})
	got := n.legacy(t, `{"id":1,"method":"publish","params":{"channel":"chat","data":1}}`+
		`{"id":2,"method":"info"}`+
		`{"id":3,"method":"publish","params":{"channel":"chat","data":3}}`)
	lines := strings.Split(got, "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], `{"id":1,"result":{"offset":1`) ||
		!strings.HasPrefix(lines[1], `{"id":2,"error":{"code":106,"message":"limit exceeded: this reply would take the replies past the limit of 100 bytes`) ||
		!strings.HasPrefix(lines[2], `{"id":3,"error":{"code":106,"message":"limit exceeded: the replies reached the limit of 100 bytes (http_api.max_batch_response_size): command not run`) {
		t.Fatalf("replies:\n%s", got)
	}
	n.expect(t, "history", `{"channel":"chat"}`, `{"result":{"publications":[],"epoch":"`+epochOf(t, n, "chat")+`","offset":1}}`)
}
