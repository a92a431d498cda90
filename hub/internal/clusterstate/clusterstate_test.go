package clusterstate

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	var r Registry
	if !r.Beat(NodeInfo{ID: "b", Name: "n"}, []byte("kb")) || !r.Update(NodeInfo{ID: "a", Name: "n"}) {
		t.Fatal("first heartbeats not new")
	}
	if r.Update(NodeInfo{ID: "b", Name: "n", NumClients: 3}) {
		t.Fatal("a second heartbeat reported new")
	}
	if key, alive := r.SessionKey("b"); !alive || string(key) != "kb" {
		t.Fatalf("session key %q, alive %v: a heartbeat without key must keep it", key, alive)
	}
	got := r.List()
	if len(got) != 2 || got[0].ID != "a" || got[1].NumClients != 3 {
		t.Fatalf("list %+v", got)
	}
	// A node last heard from longer ago than NodeExpiry is gone.
	r.mu.Lock()
	e := r.nodes["a"]
	e.seen = time.Now().Add(-NodeExpiry - time.Second)
	r.nodes["a"] = e
	r.mu.Unlock()
	if _, alive := r.SessionKey("a"); alive {
		t.Fatal("expired node alive")
	}
	if l := r.List(); len(l) != 1 || l[0].ID != "b" {
		t.Fatalf("list with an expired node %+v", l)
	}
	if gone := r.Expire(); !slices.Equal(gone, []string{"a"}) {
		t.Fatalf("expired %v", gone)
	}
	r.Remove("b")
	if len(r.List()) != 0 {
		t.Fatal("removed node listed")
	}
}

func TestNodeWire(t *testing.T) {
	t.Parallel()
	n := NodeInfo{ID: "id", Name: "name", Version: "v", NumClients: 1, NumUsers: 2, NumChannels: 3, NumSubs: 4,
		Uptime: 5, CPU: 6.5, Memory: 7, Publications: 8}
	b, err := json.Marshal(ToWire(n))
	if err != nil {
		t.Fatal(err)
	}
	var w NodeWire
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if got := w.Info(); got != n {
		t.Fatalf("round trip %+v, want %+v", got, n)
	}
}

func TestSurvey(t *testing.T) {
	t.Parallel()
	s := NewSurvey([]string{"a", "b", "c"})
	s.Add("a", json.RawMessage(`1`), "")
	s.Add("x", json.RawMessage(`2`), "") // not asked: ignored
	s.Add("a", json.RawMessage(`3`), "") // a repeat: ignored
	s.Add("b", nil, "failed")
	select {
	case <-s.Done():
		t.Fatal("done before c answered")
	default:
	}
	answers, missing, failed := s.Result()
	if !reflect.DeepEqual(answers, map[string]json.RawMessage{"a": json.RawMessage(`1`)}) ||
		!slices.Equal(missing, []string{"c"}) || failed["b"] != "failed" {
		t.Fatalf("answers %s, missing %v, failed %v", answers, missing, failed)
	}
	s.Add("c", json.RawMessage(`4`), "")
	<-s.Done()
	if s := NewSurvey(nil); s.Done() == nil {
		t.Fatal("no channel")
	} else {
		<-s.Done() // nothing to wait for
	}
}
