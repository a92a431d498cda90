package api_test

import (
	"fmt"
	"regexp"
	"strconv"
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
	// Centrifugo's shapes (its api.proto's MapReadStateResult and
	// MapReadStreamResult in JSON): entries, with the time of each change.
	n.expectTimed(t, "map_read_state", `{"channel":"board:a","limit":1}`,
		fmt.Sprintf(`{"result":{"entries":[{"key":"k0","data":{"v":0},"offset":1,"time":T}],"offset":4,"epoch":"%s","cursor":"k0"}}`, epoch))
	n.expectTimed(t, "map_read_state", `{"channel":"board:a","cursor":"k0"}`,
		fmt.Sprintf(`{"result":{"entries":[{"key":"k2","data":{"v":2},"offset":3,"time":T}],"offset":4,"epoch":"%s"}}`, epoch))
	stream := fmt.Sprintf(`{"result":{"entries":[{"key":"k2","data":{"v":2},"offset":3,"time":T},{"key":"k1","removed":true,"offset":4,"time":T}],"offset":4,"epoch":"%s"}}`, epoch)
	n.expectTimed(t, "map_read_stream", fmt.Sprintf(`{"channel":"board:a","since_offset":2,"since_epoch":"%s","limit":-1}`, epoch), stream)
	// Herald's own form of the position, as history takes it.
	n.expectTimed(t, "map_read_stream", fmt.Sprintf(`{"channel":"board:a","since":{"offset":2,"epoch":"%s"},"limit":-1}`, epoch), stream)
	if msg := n.expectError(t, "map_read_stream", `{"channel":"board:a","since_offset":2,"since_epoch":"x"}`, 112); !strings.Contains(msg, "unrecoverable position") {
		t.Errorf("map_read_stream from another epoch: %q", msg)
	}
	// One key (Centrifugo's ReadState key filter; cursor and limit
	// ignored), and the state from an earlier page's epoch.
	n.expectTimed(t, "map_read_state", fmt.Sprintf(`{"channel":"board:a","key":"k2","cursor":"k2","limit":1,"revision_offset":1,"revision_epoch":"%s"}`, epoch),
		fmt.Sprintf(`{"result":{"entries":[{"key":"k2","data":{"v":2},"offset":3,"time":T}],"offset":4,"epoch":"%s"}}`, epoch))
	n.expect(t, "map_read_state", `{"channel":"board:a","key":"k1"}`, fmt.Sprintf(`{"result":{"entries":[],"offset":4,"epoch":"%s"}}`, epoch))
	if msg := n.expectError(t, "map_read_state", `{"channel":"board:a","revision_offset":1,"revision_epoch":"x"}`, 112); !strings.Contains(msg, "unrecoverable position") {
		t.Errorf("map_read_state from another epoch: %q", msg)
	}
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
	// idempotency_key: a repeat is suppressed with the first change's
	// position, on map_publish and map_remove alike.
	first := n.call(t, "map_publish", `{"channel":"board:b","key":"i","data":1,"idempotency_key":"once"}`)
	if got := n.call(t, "map_publish", `{"channel":"board:b","key":"i","data":2,"idempotency_key":"once"}`); got != strings.Replace(first, `}}`, `,"suppressed":true,"suppress_reason":"idempotency"}}`, 1) {
		t.Fatalf("map_publish repeated: %s after %s", got, first)
	}
	removed := n.call(t, "map_remove", `{"channel":"board:b","key":"i","idempotency_key":"gone"}`)
	if got := n.call(t, "map_remove", `{"channel":"board:b","key":"i","idempotency_key":"gone"}`); got != strings.Replace(removed, `}}`, `,"suppressed":true,"suppress_reason":"idempotency"}}`, 1) {
		t.Fatalf("map_remove repeated: %s after %s", got, removed)
	}
	// A key that is not there is not removed: suppressed, nothing
	// appended, with the stream's position, as Centrifugo answers it
	// (centrifuge v0.40.1 map_broker_memory.go remove, map_broker_add.lua).
	pos := n.json(t, "map_read_stream", `{"channel":"board:b"}`)
	top := pos["offset"]
	n.expect(t, "map_remove", `{"channel":"board:b","key":"never"}`,
		fmt.Sprintf(`{"result":{"offset":%v,"epoch":"%s","suppressed":true,"suppress_reason":"key_not_found"}}`, top, pos["epoch"]))
	if got := n.json(t, "map_read_stream", `{"channel":"board:b"}`)["offset"]; got != top {
		t.Fatalf("stream at offset %v after removing a missing key, want %v", got, top)
	}

	// Bad input names the field; options Herald does not implement are
	// refused, never ignored.
	for _, tc := range []struct{ method, body, want string }{
		{"map_publish", `{"channel":"board:a","data":1}`, "key required"},
		{"map_publish", `{"channel":"board:a","key":"k"}`, "data required"},
		{"map_publish", `{"channel":"board:a","key":"k","data":1,"key_mode":"sometimes"}`, "key_mode \"sometimes\""},
		{"map_publish", `{"channel":"board:a","key":"k","data":1,"score":5}`, "score: not supported"},
		{"map_publish", `{"channel":"board:a","key":"k","data":1,"stream_data":{"a":1}}`, "stream_data: not supported"},
		{"map_publish", `{"channel":"board:a","key":"k","data":1,"idempotency_key":"` + strings.Repeat("i", 257) + `"}`, "idempotency_key: 257 bytes"},
		{"map_publish", `{"channel":"board:a","key":"` + strings.Repeat("k", 1025) + `","data":1}`, "bad request"},
		{"map_publish", `{"channel":"plain:a","key":"k","data":1}`, "not in a map namespace"},
		{"map_remove", `{"channel":"board:a"}`, "key required"},
		{"map_read_state", `{"channel":"board:a","limit":501}`, "bad request"},
		{"map_read_state", `{"channel":"board:a","asc":true}`, "asc: not supported"},
		{"map_read_state", `{"channel":"board:a","key":"bad\u0001key"}`, "bad request"},
		{"map_read_stream", `{"channel":"board:a","since":{"offset":1},"since_offset":1}`, "not both"},
		{"map_stats", `{"channel":"plain:a"}`, "not in a map namespace"},
		{"publish", `{"channel":"board:a","data":1}`, "bad request"},
	} {
		if msg := n.expectError(t, tc.method, tc.body, 107); !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: error %q, want one containing %q", tc.method, tc.body, msg, tc.want)
		}
	}
}

// expectTimed is expect for an answer with times of changes, which want
// gives as T: each must be a Unix time in milliseconds of this century.
func (n *node) expectTimed(t *testing.T, method, body, want string) {
	t.Helper()
	got := n.call(t, method, body)
	for _, m := range timeField.FindAllStringSubmatch(got, -1) {
		if ms, _ := strconv.ParseInt(m[1], 10, 64); ms < 946684800000 {
			t.Errorf("%s %s: time %s is not Unix milliseconds", method, body, m[1])
		}
	}
	if got = timeField.ReplaceAllString(got, `"time":T`); got != want {
		t.Fatalf("%s %s:\n got %s\nwant %s", method, body, got, want)
	}
}

var timeField = regexp.MustCompile(`"time":(\d+)`)

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

// TestMapMethodsLegacy: the single endpoint runs the map methods by name
// and by the numbers of Centrifugo's Command.MethodType (33–38).
func TestMapMethodsLegacy(t *testing.T) {
	t.Parallel()
	n := startNode(t, api.Config{})
	got := n.legacy(t, `{"id":1,"method":33,"params":{"channel":"board:l","key":"k","data":{"v":1}}}`+"\n"+
		`{"id":2,"method":"MAP_STATS","params":{"channel":"board:l"}}`+"\n"+
		`{"id":3,"method":35,"params":{"channel":"board:l"}}`+"\n"+
		`{"id":4,"method":36,"params":{"channel":"board:l","limit":-1}}`+"\n"+
		`{"id":5,"method":34,"params":{"channel":"board:l","key":"k"}}`+"\n"+
		`{"id":6,"method":37,"params":{"channel":"board:l"}}`+"\n"+
		`{"id":7,"method":38,"params":{"channel":"board:l"}}`)
	got = timeField.ReplaceAllString(got, `"time":T`)
	lines := strings.Split(got, "\n")
	if len(lines) != 7 {
		t.Fatalf("7 commands, %d answers: %s", len(lines), got)
	}
	for i, want := range []string{
		`{"id":1,"result":{"offset":1,`,
		`{"id":2,"result":{"num_keys":1}}`,
		`{"id":3,"result":{"entries":[{"key":"k","data":{"v":1},"offset":1,"time":T}],"offset":1,`,
		`{"id":4,"result":{"entries":[{"key":"k","data":{"v":1},"offset":1,"time":T}],"offset":1,`,
		`{"id":5,"result":{"offset":2,`,
		`{"id":6,"result":{"num_keys":0}}`,
		`{"id":7,"result":{}}`,
	} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("command %d:\n got %s\nwant %s…", i+1, lines[i], want)
		}
	}
}
