package loadgen

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/protocol"
)

func TestParseKeys(t *testing.T) {
	got, err := ParseKeys("10000, 1e6,1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{10000, 1000000, 1}; !equalInts(got, want) {
		t.Errorf("ParseKeys = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "0", "-5", "1.5", "abc", "10,", "2e9"} {
		if _, err := ParseKeys(bad); err == nil || !strings.Contains(err.Error(), "want whole numbers") {
			t.Errorf("ParseKeys(%q): want an error naming the form, got %v", bad, err)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMapValueRoundTrip(t *testing.T) {
	at := time.Unix(1700000000, 123456789)
	for _, size := range []int{0, 10, 64, 512} {
		v := mapValue(42, at, size)
		if !json.Valid(v) {
			t.Fatalf("size %d: not JSON: %s", size, v)
		}
		if size > 40 && len(v) != size {
			t.Errorf("size %d: value has %d bytes", size, len(v))
		}
		n, got, err := parseMapValue(v)
		if err != nil || n != 42 || !got.Equal(at) {
			t.Errorf("size %d: parse = %d %v %v", size, n, got, err)
		}
	}
	if _, _, err := parseMapValue([]byte(`{"t":1}`)); err == nil {
		t.Error("a value without n: want an error")
	}
	if _, _, err := parseMapValue([]byte(`not json`)); err == nil {
		t.Error("not JSON: want an error")
	}
}

func TestAppendMapPublishBatch(t *testing.T) {
	entries := []MapEntry{{Key: "a\"b", Data: []byte(`{"x":1}`)}, {Key: mapKey(7), Data: []byte(`2`)}}
	for _, parallel := range []bool{false, true} {
		body := AppendMapPublishBatch(nil, "maps:\"q", entries, parallel)
		var got struct {
			Commands []struct {
				MapPublish struct {
					Channel string          `json:"channel"`
					Key     string          `json:"key"`
					Data    json.RawMessage `json:"data"`
				} `json:"map_publish"`
			} `json:"commands"`
			Parallel bool `json:"parallel"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("not JSON: %v: %s", err, body)
		}
		if got.Parallel != parallel || len(got.Commands) != 2 {
			t.Fatalf("parallel %v: got %s", parallel, body)
		}
		for i, c := range got.Commands {
			mp := c.MapPublish
			if mp.Channel != "maps:\"q" || mp.Key != entries[i].Key || !bytes.Equal(mp.Data, entries[i].Data) {
				t.Errorf("command %d: %+v", i, mp)
			}
		}
	}
}

func TestCountAPIReplies(t *testing.T) {
	if n, err := countAPIReplies("map_publish", []byte(`{"result":{"offset":1}}`), 1); n != 1 || err != nil {
		t.Errorf("single: %d %v", n, err)
	}
	if _, err := countAPIReplies("map_publish", []byte(`{"error":{"code":107,"message":"bad request"}}`), 1); err == nil ||
		!strings.Contains(err.Error(), "107") {
		t.Errorf("single error: %v", err)
	}
	n, err := countAPIReplies("batch", []byte(`{"replies":[{"result":{}},{"error":{"code":102,"message":"unknown channel"}}]}`), 2)
	if n != 1 || err == nil || !strings.Contains(err.Error(), "102") {
		t.Errorf("batch with an error: %d %v", n, err)
	}
	if n, err := countAPIReplies("batch", []byte(`{"replies":[{"result":{}}]}`), 2); n != 1 || err == nil {
		t.Errorf("short batch: %d %v", n, err)
	}
	if _, err := countAPIReplies("batch", []byte(`<html>`), 2); err == nil {
		t.Error("not JSON: want an error")
	}
}

func TestApplyMapChanges(t *testing.T) {
	keys := map[string]struct{}{"a": {}, "b": {}}
	n := applyMapChanges(keys, []*protocol.Publication{{Key: "c"}, {Key: "a", Removed: true}, {Key: "a"}, {Key: "b", Removed: true}})
	if n != 4 || len(keys) != 2 {
		t.Fatalf("applied %d, keys %v", n, keys)
	}
	if _, ok := keys["a"]; !ok {
		t.Error("a was set again after its removal")
	}
	if _, ok := keys["b"]; ok {
		t.Error("b was removed")
	}
}

func TestFirstCopies(t *testing.T) {
	f := newFirstCopies(10, 3) // updates 10, 11 and 12
	sent := time.Now()
	f.note("k", mapValue(-1, sent, 0), sent.Add(time.Second)) // a fill value
	f.note("k", mapValue(9, sent, 0), sent)                   // the step before
	f.note("k", mapValue(13, sent, 0), sent)                  // the step after
	f.note("k", mapValue(11, sent, 0), sent.Add(9*time.Millisecond))
	f.note("k", mapValue(11, sent, 0), sent.Add(5*time.Millisecond)) // an earlier copy, read later
	f.note("k", mapValue(11, sent, 0), sent.Add(7*time.Millisecond))
	p := f.percentiles()
	if f.count() != 1 || p.Count != 1 {
		t.Fatalf("count %d, recorded %d; want 1 and 1", f.count(), p.Count)
	}
	if p.Max < 4*time.Millisecond || p.Max > 6*time.Millisecond {
		t.Errorf("first copy latency %v, want about 5ms (the least of its copies)", p.Max)
	}
	f.note("x", []byte(`"foreign"`), sent)
	if err := f.err(); err == nil || !strings.Contains(err.Error(), `key "x"`) {
		t.Errorf("a foreign value: want an error naming the key, got %v", err)
	}
}

// TestFirstCopiesConcurrent: many readers noting the same updates at once
// count each once and keep its least latency (go test -race).
func TestFirstCopiesConcurrent(t *testing.T) {
	const readers, updates = 16, 200
	f := newFirstCopies(0, updates)
	sent := time.Now()
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			for n := range int64(updates) {
				f.note("k", mapValue(n, sent, 64), sent.Add(time.Duration(r+1)*time.Millisecond))
			}
		})
	}
	wg.Wait()
	if p := f.percentiles(); f.count() != updates || p.Count != updates || p.Max > 1100*time.Microsecond {
		t.Errorf("count %d, recorded %d, max %v; want %d, %d and about 1ms", f.count(), p.Count, p.Max, updates, updates)
	}
}

// TestScanMapValue: the decoder-free reading agrees with JSON on
// mapValue's layout, and anything else goes to JSON.
func TestScanMapValue(t *testing.T) {
	at := time.Unix(1700000000, 123456789)
	for _, n := range []int64{-1, 0, 7, 123456789012} {
		for _, size := range []int{0, 64, 200} {
			b := mapValue(n, at, size)
			gn, gt, ok := scanMapValue(b)
			if !ok || gn != n || gt != at.UnixNano() {
				t.Errorf("%s: got %d %d %v", b, gn, gt, ok)
			}
		}
	}
	for _, b := range []string{`{"t":1,"n":2}`, `{ "n":1,"t":2}`, `{"n":1,"t":2`, `{"n":,"t":2}`, `{"n":92233720368547758070,"t":2}`, `"x"`} {
		if _, _, ok := scanMapValue([]byte(b)); ok {
			t.Errorf("%s: scanned, want it left to JSON", b)
		}
	}
	if n, at2, err := parseMapValue([]byte(`{"t":5,"n":2}`)); err != nil || n != 2 || at2.UnixNano() != 5 {
		t.Errorf("JSON fallback: %d %v %v", n, at2, err)
	}
}

func TestWriteMapsMarkdown(t *testing.T) {
	var b bytes.Buffer
	res := []MapsResult{
		{Keys: 10000, Fill: 2 * time.Second, RSSBefore: 10 << 20, RSSFilled: 20 << 20, StoreBefore: -1, StoreFilled: -1,
			Snapshot: 500 * time.Millisecond, Sync: MapSync{StatePages: 10}, Subscribers: 10, Updates: []UpdateStep{
				{Rate: 200, Achieved: 199, Served: true, First: Percentiles{P50: time.Millisecond, P99: 3 * time.Millisecond, Max: 12 * time.Millisecond}},
				{Rate: 400, Achieved: 300, Stopped: "the publisher fell 10s behind"},
			}},
		{Keys: 1000000, StoreBefore: 1 << 20, StoreFilled: 101 << 20},
	}
	if err := WriteMapsMarkdown(&b, res); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("want a header, a rule and 3 rows (two steps of one size, none of the other):\n%s", b.String())
	}
	cols := strings.Count(lines[0], "|")
	for i, l := range lines {
		if strings.Count(l, "|") != cols {
			t.Errorf("line %d has %d bars, the header %d: %s", i, strings.Count(l, "|"), cols, l)
		}
	}
	for _, want := range []string{"| 10000 | 2.00 | 5000 | 10.0 | 20.0 | – | 0.50 | 10 |", "| 200 | 199 | 1.00 | 3.00 | 12.0 | 0 | 0 | yes |", "| 400 | 300 |", "| no: the publisher fell 10s behind |", "| 1000000 | 0.00 | 0 | 0.0 | 0.0 | 100.0 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
