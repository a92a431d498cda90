package enginetest

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// store checks an engine's Store: set, get, delete, scan, expiry, and,
// for engines of a cluster, that every node sees what one wrote.
func (s *suite) store(t *testing.T) {
	t.Run("SetGetDeleteScan", s.testStoreBasics)
	t.Run("Expiry", s.testStoreExpiry)
	t.Run("SharedAcrossNodes", func(t *testing.T) {
		if !s.caps.Cluster {
			t.Skip("engine is single-node")
		}
		s.testStoreCluster(t)
	})
}

func storeOf(t *testing.T, n *node) engine.Store {
	t.Helper()
	st, ok := engine.StoreOf(n.Engine)
	if !ok {
		t.Fatalf("%T claims Capabilities.Store but engine.StoreOf finds no store in it", n.Engine)
	}
	return st
}

func storeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

// bucketName is a bucket of this test alone, so that runs against a
// shared server do not see each other's entries.
func bucketName(t *testing.T) string {
	return fmt.Sprintf("%s-%d", channel(t, "bucket"), time.Now().UnixNano())
}

func scanAll(t *testing.T, st engine.Store, bucket string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := st.StoreScan(storeCtx(t), bucket, func(key string, e engine.StoreEntry) error {
		out[key] = string(e.Value)
		return nil
	})
	if err != nil {
		t.Fatalf("StoreScan: %v", err)
	}
	return out
}

func (s *suite) testStoreBasics(t *testing.T) {
	st := storeOf(t, s.start(t))
	ctx := storeCtx(t)
	b, other := bucketName(t), bucketName(t)+"-other"
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	for k, v := range map[string]string{"a": "1", "b": "2", "c": ""} {
		e := time.Time{}
		if k == "b" {
			e = exp
		}
		if err := st.StoreSet(ctx, b, k, []byte(v), e); err != nil {
			t.Fatalf("StoreSet %s: %v", k, err)
		}
	}
	if err := st.StoreSet(ctx, other, "a", []byte("elsewhere"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := st.StoreSet(ctx, b, "a", []byte("1b"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	got, err := st.StoreGet(ctx, b, []string{"a", "b", "missing"})
	if err != nil {
		t.Fatalf("StoreGet: %v", err)
	}
	if len(got) != 2 || string(got["a"].Value) != "1b" || string(got["b"].Value) != "2" {
		t.Fatalf("StoreGet = %v, want a=1b b=2", got)
	}
	if !got["a"].ExpireAt.IsZero() || !got["b"].ExpireAt.Equal(exp) {
		t.Errorf("expiries %v and %v, want none and %v", got["a"].ExpireAt, got["b"].ExpireAt, exp)
	}
	if all := scanAll(t, st, b); len(all) != 3 || all["c"] != "" || all["a"] != "1b" {
		t.Errorf("StoreScan = %v, want a, b and c", all)
	}
	if err := st.StoreDelete(ctx, b, []string{"a", "missing"}); err != nil {
		t.Fatalf("StoreDelete: %v", err)
	}
	all := scanAll(t, st, b)
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if fmt.Sprint(keys) != "[b c]" {
		t.Errorf("after delete: %v, want [b c]", keys)
	}
	if o := scanAll(t, st, other); o["a"] != "elsewhere" {
		t.Errorf("the other bucket holds %v", o)
	}
}

func (s *suite) testStoreExpiry(t *testing.T) {
	st := storeOf(t, s.start(t))
	ctx := storeCtx(t)
	b := bucketName(t)
	if err := st.StoreSet(ctx, b, "short", []byte("x"), time.Now().Add(1500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := st.StoreSet(ctx, b, "past", []byte("x"), time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := st.StoreSet(ctx, b, "long", []byte("y"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.StoreGet(ctx, b, []string{"past"}); len(got) != 0 {
		t.Errorf("an entry set already expired is returned: %v", got)
	}
	deadline := time.Now().Add(eventTimeout)
	for {
		all := scanAll(t, st, b)
		if _, ok := all["short"]; !ok {
			if _, ok := all["long"]; !ok {
				t.Fatalf("the entry that has not expired went too: %v", all)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an expired entry is still returned after %v", eventTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *suite) testStoreCluster(t *testing.T) {
	a, b := s.start(t), s.start(t)
	sa, sb := storeOf(t, a), storeOf(t, b)
	ctx := storeCtx(t)
	bucket := bucketName(t)
	if err := sa.StoreSet(ctx, bucket, "k", []byte("from a"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := scanAll(t, sb, bucket); got["k"] != "from a" {
		t.Fatalf("node b sees %v, want what node a wrote", got)
	}
	if err := sb.StoreDelete(ctx, bucket, []string{"k"}); err != nil {
		t.Fatal(err)
	}
	if got, err := sa.StoreGet(ctx, bucket, []string{"k"}); err != nil || len(got) != 0 {
		t.Fatalf("node a still sees %v (%v) after node b deleted it", got, err)
	}
}
