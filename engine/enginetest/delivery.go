package enginetest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

func (s *suite) delivery(t *testing.T) {
	t.Run("WithoutHistoryOffsetZero", s.testWithoutHistory)
	t.Run("OffsetsFromOne", s.testOffsetsFromOne)
	t.Run("ConcurrentPublishersOneChannel", s.testConcurrentPublishers)
	t.Run("PublisherOrderWithoutHistory", s.testPublisherOrderWithoutHistory)
	t.Run("InfoTagsTime", s.testInfoTagsTime)
	t.Run("ExceptClient", s.testExceptClient)
	t.Run("Delta", s.testDelta)
	t.Run("LargePayload", s.testLargePayload)
	t.Run("ManyChannels", s.testManyChannels)
	t.Run("JoinLeave", s.testJoinLeave)
	t.Run("Control", s.testControl)
	t.Run("ControlToOneNode", s.testControlToSelf)
}

// historyOpts is opts with history when the engine has it.
func (s *suite) historyOpts(size int) engine.PublishOptions {
	if !s.caps.History {
		return engine.PublishOptions{}
	}
	return withHistory(size)
}

func (s *suite) testWithoutHistory(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	n.subscribe(t, ch)
	sp := n.publish(t, ch, []byte(`"x"`), engine.PublishOptions{})
	if sp != (engine.StreamPosition{}) {
		t.Errorf("Publish without history returned %+v, want zero position", sp)
	}
	d := n.rec.awaitPubs(t, ch, 1)[0]
	if d.pub.Offset != 0 || d.pos != (engine.StreamPosition{}) {
		t.Errorf("delivered offset %d at %+v, want offset 0 at zero position", d.pub.Offset, d.pos)
	}
	if !bytes.Equal(d.pub.Data, []byte(`"x"`)) {
		t.Errorf("delivered data %q", d.pub.Data)
	}
	if !s.caps.History {
		return
	}
	pubs, pos := n.history(t, ch, engine.HistoryRequest{Limit: -1})
	if len(pubs) != 0 || pos.Offset != 0 {
		t.Errorf("history of a channel without history: %d publications, offset %d; want none at 0", len(pubs), pos.Offset)
	}
}

func (s *suite) testOffsetsFromOne(t *testing.T) {
	if !s.caps.History {
		t.Skip("engine has no history")
	}
	n := s.start(t)
	ch := channel(t, "a")
	n.subscribe(t, ch)
	var epoch string
	for i := uint64(1); i <= 5; i++ {
		sp := n.publish(t, ch, numbered(i), withHistory(10))
		if sp.Offset != i {
			t.Fatalf("publication %d got offset %d", i, sp.Offset)
		}
		if sp.Epoch == "" || (epoch != "" && sp.Epoch != epoch) {
			t.Fatalf("publication %d got epoch %q, want the stream's non-empty epoch %q", i, sp.Epoch, epoch)
		}
		epoch = sp.Epoch
	}
	got := n.rec.awaitPubs(t, ch, 5)
	if len(got) != 5 {
		t.Fatalf("delivered %d publications, want 5", len(got))
	}
	for i, d := range got {
		want := engine.StreamPosition{Offset: uint64(i + 1), Epoch: epoch}
		if d.pos != want || d.pub.Offset != want.Offset {
			t.Errorf("delivery %d: offset %d at %+v, want %+v", i, d.pub.Offset, d.pos, want)
		}
		if !bytes.Equal(d.pub.Data, numbered(uint64(i+1))) {
			t.Errorf("delivery %d: data %q", i, d.pub.Data)
		}
	}
}

// testConcurrentPublishers checks that publications on one channel reach the
// handler in offset order, whatever the number of publishers.
func (s *suite) testConcurrentPublishers(t *testing.T) {
	if !s.caps.History {
		t.Skip("engine has no history")
	}
	const publishers, each = 8, 50
	const total = publishers * each
	n := s.start(t)
	ch := channel(t, "a")
	n.subscribe(t, ch)
	returned := publishConcurrently(t, []*node{n}, ch, publishers, each, withHistory(total))

	slices.Sort(returned)
	if !slices.Equal(returned, seq(1, total)) {
		t.Errorf("Publish returned offsets %v, want 1..%d each once", returned, total)
	}
	got := n.rec.awaitPubs(t, ch, total)
	if len(got) != total {
		t.Fatalf("delivered %d publications, want %d", len(got), total)
	}
	for i, d := range got {
		if d.pub.Offset != uint64(i+1) || d.pos.Offset != uint64(i+1) {
			t.Fatalf("delivery %d has offset %d (position %d): out of offset order", i, d.pub.Offset, d.pos.Offset)
		}
	}
	checkPublisherOrder(t, got, publishers)

	pubs, _ := n.history(t, ch, engine.HistoryRequest{Limit: -1})
	if len(pubs) != total {
		t.Fatalf("history has %d publications, want %d", len(pubs), total)
	}
	for i, p := range pubs {
		if p.Offset != got[i].pub.Offset || !bytes.Equal(p.Data, got[i].pub.Data) {
			t.Fatalf("history[%d] = offset %d %q, delivered offset %d %q", i, p.Offset, p.Data, got[i].pub.Offset, got[i].pub.Data)
		}
	}
}

func (s *suite) testPublisherOrderWithoutHistory(t *testing.T) {
	const publishers, each = 4, 50
	n := s.start(t)
	ch := channel(t, "a")
	n.subscribe(t, ch)
	publishConcurrently(t, []*node{n}, ch, publishers, each, engine.PublishOptions{})
	got := n.rec.awaitPubs(t, ch, publishers*each)
	if len(got) != publishers*each {
		t.Fatalf("delivered %d publications, want %d", len(got), publishers*each)
	}
	checkPublisherOrder(t, got, publishers)
}

// publishConcurrently runs publishers goroutines that each publish each
// messages "p/i" in order, publisher p through nodes[p%len(nodes)], and
// returns the offsets Publish returned.
func publishConcurrently(t *testing.T, nodes []*node, ch string, publishers, each int, opts engine.PublishOptions) []uint64 {
	t.Helper()
	c := ctx(t)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		returned []uint64
		errs     []error
	)
	for p := range publishers {
		n := nodes[p%len(nodes)]
		wg.Go(func() {
			for i := range each {
				sp, err := n.Publish(c, ch, &engine.Publication{Data: fmt.Appendf(nil, "%d/%d", p, i)}, opts)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				returned = append(returned, sp.Offset)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("Publish: %v", errs[0])
	}
	return returned
}

// checkPublisherOrder checks that each publisher's messages, "p/i", were
// delivered in the order it published them and none is missing.
func checkPublisherOrder(t *testing.T, got []delivery, publishers int) {
	t.Helper()
	next := make([]int, publishers)
	for _, d := range got {
		var p, i int
		if _, err := fmt.Sscanf(string(d.pub.Data), "%d/%d", &p, &i); err != nil || p < 0 || p >= publishers {
			t.Fatalf("unexpected delivery %q", d.pub.Data)
		}
		if i != next[p] {
			t.Fatalf("publisher %d: delivered message %d, want %d", p, i, next[p])
		}
		next[p]++
	}
}

func (s *suite) testInfoTagsTime(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	n.subscribe(t, ch)
	want := []*engine.Publication{
		{
			Data: []byte(`{"text":"hi"}`),
			Info: &engine.ClientInfo{User: "user1", Client: "c-1", ConnInfo: []byte(`{"name":"Ann"}`), ChanInfo: []byte(`{"role":"admin"}`)},
			Tags: map[string]string{"kind": "greeting", "empty": ""},
		},
		{Data: []byte(`{"text":"from server"}`)},                      // no info, no tags
		{Data: []byte(`{}`), Info: &engine.ClientInfo{Client: "c-2"}}, // anonymous
	}
	before := time.Now().UnixMilli()
	for _, p := range want {
		if _, err := n.Publish(ctx(t), ch, p, s.historyOpts(10)); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	after := time.Now().UnixMilli()
	got := n.rec.awaitPubs(t, ch, len(want))
	for i, d := range got {
		if diff := pubDiff(want[i], d.pub); diff != "" {
			t.Errorf("delivery %d: %s", i, diff)
		}
		// A second of slack covers engines that take the time from a
		// server on this machine with a coarser clock.
		if d.pub.Time < before-1000 || d.pub.Time > after+1000 {
			t.Errorf("delivery %d: time %d, want between %d and %d", i, d.pub.Time, before, after)
		}
	}
	if !s.caps.History {
		return
	}
	pubs, _ := n.history(t, ch, engine.HistoryRequest{Limit: -1})
	if len(pubs) != len(want) {
		t.Fatalf("history has %d publications, want %d", len(pubs), len(want))
	}
	for i, p := range pubs {
		if diff := pubDiff(want[i], p); diff != "" {
			t.Errorf("history[%d]: %s", i, diff)
		}
		if p.Time != got[i].pub.Time {
			t.Errorf("history[%d]: time %d, delivered with %d", i, p.Time, got[i].pub.Time)
		}
	}
}

func (s *suite) testLargePayload(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	n.subscribe(t, ch)
	data := make([]byte, 1<<20)
	_, _ = rand.Read(data)
	want := &engine.Publication{Data: data}
	if _, err := n.Publish(ctx(t), ch, want, s.historyOpts(10)); err != nil {
		t.Fatalf("Publish 1 MiB: %v", err)
	}
	d := n.rec.awaitPubs(t, ch, 1)[0]
	if diff := pubDiff(want, d.pub); diff != "" {
		t.Errorf("delivered: %s", diff)
	}
	if !s.caps.History {
		return
	}
	pubs, _ := n.history(t, ch, engine.HistoryRequest{Limit: -1})
	if len(pubs) != 1 {
		t.Fatalf("history has %d publications, want 1", len(pubs))
	}
	if diff := pubDiff(want, pubs[0]); diff != "" {
		t.Errorf("history: %s", diff)
	}
}

// testManyChannels checks that channels keep separate streams: each gets
// offsets from 1 however many others are published to at the same time.
func (s *suite) testManyChannels(t *testing.T) {
	const channels, each, workers = 1000, 3, 8
	n := s.start(t)
	names := make([]string, channels)
	base := channel(t, "")
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", base, i)
	}
	n.subscribe(t, names...)

	c := ctx(t)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			// Each channel belongs to one worker, which publishes its
			// messages in order.
			for i := w; i < channels; i += workers {
				for j := range each {
					if _, err := n.Publish(c, names[i], &engine.Publication{Data: numbered(uint64(j + 1))}, s.historyOpts(each)); err != nil {
						errs <- fmt.Errorf("publish %q: %w", names[i], err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	for _, ch := range names {
		got := n.rec.awaitPubs(t, ch, each)
		if len(got) != each {
			t.Fatalf("%s: delivered %d publications, want %d", ch, len(got), each)
		}
		for j, d := range got {
			if !bytes.Equal(d.pub.Data, numbered(uint64(j+1))) {
				t.Fatalf("%s: delivery %d is %q", ch, j, d.pub.Data)
			}
			if s.caps.History && d.pub.Offset != uint64(j+1) {
				t.Fatalf("%s: delivery %d has offset %d, want %d", ch, j, d.pub.Offset, j+1)
			}
		}
	}
	if !s.caps.History {
		return
	}
	for _, ch := range names {
		pubs, pos := n.history(t, ch, engine.HistoryRequest{Limit: -1})
		if !slices.Equal(offsets(pubs), seq(1, each)) || pos.Offset != each || pos.Epoch == "" {
			t.Fatalf("%s: history offsets %v at %+v, want 1..%d at top %d", ch, offsets(pubs), pos, each, each)
		}
	}
}

func (s *suite) testJoinLeave(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	n.subscribe(t, ch)
	info := &engine.ClientInfo{User: "u1", Client: "c1", ConnInfo: []byte(`{"a":1}`), ChanInfo: []byte(`{"b":2}`)}
	if err := n.PublishJoin(ctx(t), ch, info); err != nil {
		t.Fatalf("PublishJoin: %v", err)
	}
	n.rec.await(t, eventTimeout, "join", func() bool { return len(n.rec.joins[ch]) > 0 })
	if joins := n.rec.joinsOf(ch); len(joins) != 1 || !sameInfo(info, joins[0]) {
		t.Errorf("joins %v, want one of %s", joins, infoString(info))
	}
	if err := n.PublishLeave(ctx(t), ch, info); err != nil {
		t.Fatalf("PublishLeave: %v", err)
	}
	n.rec.await(t, eventTimeout, "leave", func() bool { return len(n.rec.leaves[ch]) > 0 })
	if leaves := n.rec.leavesOf(ch); len(leaves) != 1 || !sameInfo(info, leaves[0]) {
		t.Errorf("leaves %v, want one of %s", leaves, infoString(info))
	}
	if joins := n.rec.joinsOf(ch); len(joins) != 1 {
		t.Errorf("%d joins after the leave, want 1", len(joins))
	}
}

// testControl looks for its own payload only: on a shared server other
// tests' control messages reach this node too.
func (s *suite) testControl(t *testing.T) {
	n := s.start(t)
	payloads := [][]byte{[]byte("control-" + randomHex(8)), []byte("control-" + randomHex(8))}
	for _, p := range payloads {
		if err := n.PublishControl(ctx(t), p, ""); err != nil {
			t.Fatalf("PublishControl: %v", err)
		}
	}
	n.rec.await(t, eventTimeout, "control messages", func() bool {
		return slices.IndexFunc(n.rec.controls, func(b []byte) bool { return bytes.Equal(b, payloads[1]) }) >= 0
	})
	n.rec.mu.Lock()
	first := slices.IndexFunc(n.rec.controls, func(b []byte) bool { return bytes.Equal(b, payloads[0]) })
	second := slices.IndexFunc(n.rec.controls, func(b []byte) bool { return bytes.Equal(b, payloads[1]) })
	n.rec.mu.Unlock()
	if first < 0 || first > second {
		t.Errorf("control messages out of order or missing: first at %d, second at %d", first, second)
	}
}

// testControlToSelf sends control messages addressed to this node, which
// arrive, and to a node that does not exist, which are dropped without an
// error (a node learns who is alive from heartbeats, not from the engine).
func (s *suite) testControlToSelf(t *testing.T) {
	n := s.start(t)
	if n.NodeID() == "" {
		t.Fatal("NodeID is empty")
	}
	lost := []byte("control-lost-" + randomHex(8))
	if err := n.PublishControl(ctx(t), lost, "no-such-node-"+randomHex(4)); err != nil {
		t.Fatalf("PublishControl to a node that does not exist: %v", err)
	}
	mine := []byte("control-mine-" + randomHex(8))
	if err := n.PublishControl(ctx(t), mine, n.NodeID()); err != nil {
		t.Fatalf("PublishControl to this node: %v", err)
	}
	n.rec.await(t, eventTimeout, "control message addressed to this node", func() bool {
		return slices.ContainsFunc(n.rec.controls, func(b []byte) bool { return bytes.Equal(b, mine) })
	})
	if n.rec.hasControl(lost) {
		t.Error("a control message addressed to another node reached this one")
	}
}
