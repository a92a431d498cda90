package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api"
)

func TestBatch(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprint("parallel=", parallel), func(t *testing.T) {
			n := startNode(t, api.Config{})
			c := n.dial(t, "alice")
			c.subscribe("plain:room")
			epoch := epochOf(t, n, "chat")
			body := `{"parallel":` + fmt.Sprint(parallel) + `,"commands":[` +
				`{"publish":{"channel":"chat","data":1}},` +
				`{"publish":{"channel":"","data":1}},` +
				`{"broadcast":{"channels":["plain:room"],"data":2}},` +
				`{"presence_stats":{"channel":"chat"}},` +
				`{"history":{"channel":"plain:room"}},` +
				`{"disconnect":{"user":"nobody"}},` +
				`{"info":{}},` +
				`{"nope":{}},` +
				`{"publish":{"channel":7}},` +
				`{"channels":{"pattern":"plain:*"}}]}`
			got := n.call(t, "batch", body)
			want := `{"replies":[` +
				`{"publish":{"offset":1,"epoch":"` + epoch + `"}},` +
				`{"error":{"code":107,"message":"channel required"}},` +
				`{"broadcast":{"responses":[{"result":{}}]}},` +
				`{"presence_stats":{"num_clients":0,"num_users":0}},` +
				`{"error":{"code":108,"message":"not available: history is off in the namespace of channel \"plain:room\""}},` +
				`{"disconnect":{}},` +
				`{"info":{"nodes":[{"uid":"` + n.hub.NodeID() + `",`
			if !strings.HasPrefix(got, want) {
				t.Fatalf("replies:\n got %s\nwant prefix %s", got, want)
			}
			wantTail := `]}},` +
				`{"error":{"code":104,"message":"method not found: a command needs one method-named field (publish, broadcast, …)"}},` +
				`{"error":{"code":107,"message":"publish.channel: want string, got number"}},` +
				`{"channels":{"channels":{"plain:room":{"num_clients":1}}}}]}`
			if !strings.HasSuffix(got, wantTail) {
				t.Fatalf("replies:\n got %s\nwant suffix %s", got, wantTail)
			}
			if got, want := c.Read(), `{"push":{"channel":"plain:room","pub":{"data":2}}}`; got != want {
				t.Fatalf("push %s, want %s", got, want)
			}
		})
	}
}

func TestBatchEmptyAndErrors(t *testing.T) {
	n := startNode(t, api.Config{})
	n.expect(t, "batch", `{}`, `{"replies":[]}`)
	n.expect(t, "batch", `{"commands":[]}`, `{"replies":[]}`)
	if got := n.expectError(t, "batch", `{"commands":{}}`, 107); got != "commands: want array, got object" {
		t.Errorf("commands object: %q", got)
	}
}

// TestBatchOrder checks that a sequential batch runs in order: the
// publications get consecutive offsets in command order.
func TestBatchOrder(t *testing.T) {
	n := startNode(t, api.Config{})
	var cmds []string
	for i := 1; i <= 20; i++ {
		cmds = append(cmds, fmt.Sprintf(`{"publish":{"channel":"chat","data":%d}}`, i))
	}
	n.call(t, "batch", `{"commands":[`+strings.Join(cmds, ",")+`]}`)
	got := n.call(t, "history", `{"channel":"chat","limit":-1}`)
	for i := 1; i <= 20; i++ {
		if !strings.Contains(got, fmt.Sprintf(`{"data":%d,"offset":%d}`, i, i)) {
			t.Fatalf("publication %d not at offset %d: %s", i, i, got)
		}
	}
}
