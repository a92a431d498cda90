package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api"
)

func TestMapMethods(t *testing.T) {
	t.Parallel()
	n := startNode(t, api.Config{})
	for i := range 3 {
		n.call(t, "map_publish", fmt.Sprintf(`{"channel":"board:a","key":"k%d","data":{"v":%d}}`, i, i))
	}
	epoch := n.json(t, "map_read_stream", `{"channel":"board:a"}`)["epoch"]
	n.expect(t, "map_remove", `{"channel":"board:a","key":"k1"}`, fmt.Sprintf(`{"result":{"offset":4,"epoch":"%s"}}`, epoch))
	n.expect(t, "map_stats", `{"channel":"board:a"}`, `{"result":{"num_keys":2}}`)
	n.expect(t, "map_read_state", `{"channel":"board:a","limit":1}`,
		fmt.Sprintf(`{"result":{"publications":[{"key":"k0","data":{"v":0},"offset":1}],"offset":4,"epoch":"%s","cursor":"k0"}}`, epoch))
	n.expect(t, "map_read_state", `{"channel":"board:a","cursor":"k0"}`,
		fmt.Sprintf(`{"result":{"publications":[{"key":"k2","data":{"v":2},"offset":3}],"offset":4,"epoch":"%s"}}`, epoch))
	n.expect(t, "map_read_stream", fmt.Sprintf(`{"channel":"board:a","since":{"offset":2,"epoch":"%s"},"limit":-1}`, epoch),
		fmt.Sprintf(`{"result":{"publications":[{"key":"k2","data":{"v":2},"offset":3},{"key":"k1","removed":true,"offset":4}],"offset":4,"epoch":"%s"}}`, epoch))
	n.expect(t, "map_clear", `{"channel":"board:a"}`, `{"result":{}}`)
	n.expect(t, "map_stats", `{"channel":"board:a"}`, `{"result":{"num_keys":0}}`)
	if got := n.json(t, "map_read_stream", `{"channel":"board:a"}`)["epoch"]; got == epoch {
		t.Fatalf("the epoch %v stayed after map_clear", got)
	}

	// key_mode: a refused publication is suppressed, as in Centrifugo.
	n.expect(t, "map_publish", `{"channel":"board:b","key":"k","data":1,"key_mode":"if_exists"}`, `{"result":{"suppressed":true,"suppress_reason":"key_not_found"}}`)
	n.call(t, "map_publish", `{"channel":"board:b","key":"k","data":1,"key_mode":"if_new"}`)
	n.expect(t, "map_publish", `{"channel":"board:b","key":"k","data":2,"key_mode":"if_new"}`, `{"result":{"suppressed":true,"suppress_reason":"key_exists"}}`)
	n.expect(t, "map_stats", `{"channel":"board:b"}`, `{"result":{"num_keys":1}}`)
	// version: a change not above the key's version is suppressed.
	n.call(t, "map_publish", `{"channel":"board:b","key":"v","data":1,"version":3,"version_epoch":"x"}`)
	n.expect(t, "map_publish", `{"channel":"board:b","key":"v","data":2,"version":3,"version_epoch":"x"}`, `{"result":{"suppressed":true,"suppress_reason":"version"}}`)

	// Bad input names the field; options Herald does not implement are
	// refused, never ignored.
	for _, tc := range []struct{ method, body, want string }{
		{"map_publish", `{"channel":"board:a","data":1}`, "key required"},
		{"map_publish", `{"channel":"board:a","key":"k"}`, "data required"},
		{"map_publish", `{"channel":"board:a","key":"k","data":1,"key_mode":"sometimes"}`, "key_mode \"sometimes\""},
		{"map_publish", `{"channel":"board:a","key":"k","data":1,"score":5}`, "score: not supported"},
		{"map_publish", `{"channel":"board:a","key":"` + strings.Repeat("k", 1025) + `","data":1}`, "bad request"},
		{"map_publish", `{"channel":"plain:a","key":"k","data":1}`, "not in a map namespace"},
		{"map_remove", `{"channel":"board:a"}`, "key required"},
		{"map_read_state", `{"channel":"board:a","limit":501}`, "bad request"},
		{"map_read_state", `{"channel":"board:a","asc":true}`, "asc: not supported"},
		{"map_stats", `{"channel":"plain:a"}`, "not in a map namespace"},
		{"publish", `{"channel":"board:a","data":1}`, "bad request"},
	} {
		if msg := n.expectError(t, tc.method, tc.body, 107); !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: error %q, want one containing %q", tc.method, tc.body, msg, tc.want)
		}
	}
}

// json calls method and returns its result object.
func (n *node) json(t *testing.T, method, body string) map[string]any {
	t.Helper()
	m := (response{status: 200, body: n.call(t, method, body)}).json(t)
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("%s %s: %v", method, body, m)
	}
	return res
}

func TestMapMethodsInBatch(t *testing.T) {
	t.Parallel()
	n := startNode(t, api.Config{})
	got := n.call(t, "batch", `{"commands":[{"map_publish":{"channel":"board:b","key":"k","data":{"v":1}}},{"map_stats":{"channel":"board:b"}},{"map_remove":{"channel":"board:b","key":"k"}},{"map_stats":{"channel":"board:b"}}]}`)
	if !strings.Contains(got, `"map_publish":{"offset":1,`) || !strings.Contains(got, `{"map_stats":{"num_keys":1}}`) ||
		!strings.Contains(got, `"map_remove":{"offset":2,`) || !strings.Contains(got, `{"map_stats":{"num_keys":0}}`) {
		t.Fatalf("batch of map commands: %s", got)
	}
}
