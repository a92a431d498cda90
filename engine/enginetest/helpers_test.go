package enginetest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/memory"
)

// The exported helpers, run over the memory engine.

func startMemory(t *testing.T) (*memory.Engine, *enginetest.Recorder) {
	rec := enginetest.NewRecorder()
	e := enginetest.NewEngine(t, func(context.Context) (*memory.Engine, error) { return memory.New(memory.Config{}), nil })
	enginetest.StartEngine(t, e, rec)
	return e, rec
}

func TestRecorderPublications(t *testing.T) {
	e, rec := startMemory(t)
	if err := e.Subscribe(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	opts := engine.PublishOptions{HistorySize: 10, HistoryTTL: time.Minute}
	for i := range 3 {
		if _, err := e.Publish(t.Context(), "a", &engine.Publication{Data: fmt.Appendf(nil, "%d", i)}, opts); err != nil {
			t.Fatal(err)
		}
	}
	got := rec.WaitForPublications(t, "a", 3, 10*time.Second)
	if len(got) != 3 {
		t.Fatalf("%d deliveries, want 3", len(got))
	}
	for i, d := range got {
		if string(d.Pub.Data) != fmt.Sprint(i) || d.Position.Offset != uint64(i+1) || d.Position.Epoch == "" {
			t.Errorf("delivery %d: %q at %+v", i, d.Pub.Data, d.Position)
		}
	}
	if n := len(rec.Publications("b")); n != 0 {
		t.Errorf("%d deliveries on a channel nobody published to", n)
	}
}

// stopTB records a fatal failure instead of failing the test; Fatalf
// ends the calling goroutine, as testing.T's does.
type stopTB struct {
	testing.TB
	fatal string
}

func (s *stopTB) Fatalf(format string, args ...any) {
	s.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatalOf runs f in a goroutine of its own and returns its fatal message.
func fatalOf(t *testing.T, f func(tb testing.TB)) string {
	tb := &stopTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(tb)
	}()
	<-done
	return tb.fatal
}

func TestRecorderWaitTimesOut(t *testing.T) {
	rec := enginetest.NewRecorder()
	msg := fatalOf(t, func(tb testing.TB) { rec.WaitForPublicationCount(tb, "a", 1, 10*time.Millisecond) })
	if msg == "" {
		t.Error("waiting for a publication that never comes did not fail")
	}
}

func TestPublishMarker(t *testing.T) {
	e, rec := startMemory(t)
	if err := e.Subscribe(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	enginetest.PublishMarker(t, e, rec, "a", "end")
	if got := rec.Publications("a"); len(got) == 0 || string(got[len(got)-1].Pub.Data) != "end" {
		t.Errorf("deliveries %v, want the marker last", got)
	}
}

func TestCheckAtMostOnce(t *testing.T) {
	deliveries := func(data ...string) []enginetest.Delivery {
		out := make([]enginetest.Delivery, len(data))
		for i, d := range data {
			out[i] = enginetest.Delivery{Pub: &engine.Publication{Data: []byte(d)}}
		}
		return out
	}
	if n := enginetest.CheckAtMostOnce(t, deliveries("0/0", "1/1", "0/2", "end", "1/5"), 2, "end"); n != 4 {
		t.Errorf("counted %d messages, want 4", n)
	}
	for name, bad := range map[string][]enginetest.Delivery{
		"duplicate":    deliveries("0/0", "0/0"),
		"reordered":    deliveries("1/3", "1/1"),
		"not p/i":      deliveries("end"),
		"no publisher": deliveries("2/0"),
	} {
		if msg := fatalOf(t, func(tb testing.TB) { enginetest.CheckAtMostOnce(tb, bad, 2) }); msg == "" {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestNewEngineFails(t *testing.T) {
	msg := fatalOf(t, func(tb testing.TB) {
		enginetest.NewEngine(tb, func(context.Context) (*memory.Engine, error) { return nil, errors.New("no server") })
	})
	if msg == "" {
		t.Error("a failing constructor did not fail the test")
	}
}

func TestPublicationDiff(t *testing.T) {
	want := enginetest.SamplePublication()
	if d := enginetest.PublicationDiff(want, enginetest.SamplePublication()); d != "" {
		t.Errorf("equal publications differ: %s", d)
	}
	got := enginetest.SamplePublication()
	got.Info.ChanInfo = nil
	if enginetest.PublicationDiff(want, got) == "" {
		t.Error("a different channel info went unnoticed")
	}
}
