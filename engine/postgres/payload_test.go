package postgres

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/heraldhq/herald/engine"
)

// TestPayloadSizes publishes around PostgreSQL's 8000-byte notification
// limit and far above it, as text and as binary, with and without
// history, and checks that both nodes get every byte.
func TestPayloadSizes(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	recA, recB := newRecorder(), newRecorder()
	a := startEngine(t, testOptions(dsn, schema), recA)
	b := startEngine(t, testOptions(dsn, schema), recB)
	ctx := t.Context()

	sizes := []int{7999, 8000, 8001, 1 << 20}
	// The sizes around the largest publication that still fits inline.
	for n := 7780; n <= 7990; n += 7 {
		sizes = append(sizes, n)
	}
	for _, hist := range []bool{false, true} {
		for _, binary := range []bool{false, true} {
			ch := fmt.Sprintf("sizes:%v:%v:%s", hist, binary, randomToken(4))
			for _, e := range []*Engine{a, b} {
				if err := e.Subscribe(ctx, ch); err != nil {
					t.Fatal(err)
				}
			}
			opts := engine.PublishOptions{}
			if hist {
				opts = engine.PublishOptions{HistorySize: len(sizes), HistoryTTL: time.Minute}
			}
			var want [][]byte
			for _, n := range sizes {
				data := payload(n, binary)
				want = append(want, data)
				if _, err := a.Publish(ctx, ch, &engine.Publication{Data: data}, opts); err != nil {
					t.Fatalf("publish %d bytes: %v", n, err)
				}
			}
			for name, rec := range map[string]*recorder{"a": recA, "b": recB} {
				got := rec.awaitN(t, ch, len(want))
				for i, d := range got {
					if !bytes.Equal(d.pub.Data, want[i]) {
						t.Fatalf("node %s, %s: delivery %d has %d bytes, want the %d published", name, ch, i, len(d.pub.Data), len(want[i]))
					}
				}
			}
			if hist {
				pubs, _, err := b.History(ctx, ch, engine.HistoryRequest{Limit: -1})
				if err != nil {
					t.Fatal(err)
				}
				if len(pubs) != len(want) {
					t.Fatalf("history has %d publications, want %d", len(pubs), len(want))
				}
				for i, p := range pubs {
					if !bytes.Equal(p.Data, want[i]) {
						t.Fatalf("history[%d] has %d bytes, want %d", i, len(p.Data), len(want[i]))
					}
				}
			}
		}
	}
	if testutil.ToFloat64(a.metrics.spilled) == 0 {
		t.Error("no publication was spilled")
	}
	if inline := testutil.CollectAndCount(a.metrics.payloadBytes); inline == 0 {
		t.Error("payload size histogram not collected")
	}
}

// payload returns n bytes of JSON-safe text or of random binary.
func payload(n int, binary bool) []byte {
	b := make([]byte, n)
	if binary {
		_, _ = rand.Read(b)
		b[0] = 0 // a NUL byte can never travel raw
		return b
	}
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// TestSpilledControlAndJoin checks the non-publication records that do not
// fit a notification.
func TestSpilledControlAndJoin(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	rec := newRecorder()
	a := startEngine(t, testOptions(dsn, schema), rec)
	ctx := t.Context()
	big := payload(9000, true)
	for _, node := range []string{"", a.NodeID()} {
		if err := a.PublishControl(ctx, big, node); err != nil {
			t.Fatal(err)
		}
		rec.await(t, 10*time.Second, "spilled control message to node "+node, func() bool {
			return len(rec.controls) > 0 && bytes.Equal(rec.controls[len(rec.controls)-1], big)
		})
		rec.mu.Lock()
		rec.controls = nil
		rec.mu.Unlock()
	}
	j := &joinRecorder{recorder: newRecorder(), joins: make(chan *engine.ClientInfo, 1)}
	b := startEngine(t, testOptions(dsn, schema), j)
	ch := "big-join:" + randomToken(4)
	if err := b.Subscribe(ctx, ch); err != nil {
		t.Fatal(err)
	}
	info := &engine.ClientInfo{User: "u", Client: "c", ConnInfo: payload(20000, false)}
	if err := a.PublishJoin(ctx, ch, info); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-j.joins:
		if !sameInfo(got, info) {
			t.Fatalf("join info differs: %d bytes of conn info", len(got.ConnInfo))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("spilled join not delivered")
	}
}

type joinRecorder struct {
	*recorder
	joins chan *engine.ClientInfo
}

func (j *joinRecorder) HandleJoin(_ string, info *engine.ClientInfo) {
	select {
	case j.joins <- info:
	default:
	}
}
