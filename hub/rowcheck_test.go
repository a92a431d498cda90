package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// ownerCheck lets a user see the publications whose data names it as
// owner, in namespace rc; it records the users of every call, and fails
// for data with "fail".
type ownerCheck struct {
	mu    sync.Mutex
	calls [][]string
}

func (o *ownerCheck) Checks(ns string) bool { return ns == "rc" }

func (o *ownerCheck) Visible(_ context.Context, _ string, pub *engine.Publication, users []string) (map[string]bool, error) {
	o.mu.Lock()
	o.calls = append(o.calls, slices.Sorted(slices.Values(users)))
	o.mu.Unlock()
	var d struct {
		Owner string `json:"owner"`
		Fail  bool   `json:"fail"`
	}
	if err := json.Unmarshal(pub.Data, &d); err != nil {
		return nil, err
	}
	if d.Fail {
		return nil, errors.New("the check failed")
	}
	return map[string]bool{d.Owner: true}, nil
}

func (o *ownerCheck) callsSoFar() [][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.calls)
}

// TestRowCheck: two users on one channel each receive only the rows the
// check lets them see, live, in recovery and in history; the check runs
// once per publication for the distinct users (two connections of one
// user count once), a failing check sends the publication to nobody, and
// namespaces it does not check are left alone.
func TestRowCheck(t *testing.T) {
	t.Parallel()
	check := &ownerCheck{}
	n := startNode(t, hub.Config{RowCheck: check, Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("rc", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowHistoryForSubscriber: true, ForceRecovery: true,
			HistorySize: 100, HistoryTTL: time.Minute, AllowedDeltaTypes: []string{hub.DeltaFossil}}),
		ns("open", hub.NamespaceOptions{AllowSubscribeForClient: true}),
	}}})
	u1, u1b, u2 := n.dial(t), n.dial(t), n.dial(t)
	u1.Connect("u1")
	u1b.Connect("u1")
	u2.Connect("u2")
	for _, c := range []*rawClient{u1, u1b, u2} {
		// A delta is against the channel's previous publication, which
		// the user may not have been sent: none is negotiated.
		if res := c.MustSubscribe(2, "rc:orders", `"delta":"fossil"`); res["delta"] == true {
			t.Fatalf("delta negotiated under a row check: %v", res)
		}
		c.MustSubscribe(3, "open:x", "")
	}
	var sp engine.StreamPosition
	for i, d := range []string{`"owner":"u1"`, `"owner":"u2"`, `"owner":"u2","fail":true`, `"owner":"u1"`, `"owner":"u2"`} {
		var err error
		sp, err = n.hub.Publish(context.Background(), "rc:orders", fmt.Appendf(nil, `{"n":%d,%s}`, i+1, d), hub.PublishOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := n.hub.Publish(context.Background(), "open:x", []byte(`{"n":9}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[*rawClient]string{u1: "[1 4]", u1b: "[1 4]", u2: "[2 5]"}
	for c, w := range want {
		msgs := c.Drain()
		if got := fmt.Sprint(pubNs(t, jsonclient.PushesOf(msgs, "rc:orders", "pub"))); got != w {
			t.Fatalf("live: got %s, want %s", got, w)
		}
		if got := fmt.Sprint(pubNs(t, jsonclient.PushesOf(msgs, "open:x", "pub"))); got != "[9]" {
			t.Fatalf("an unchecked namespace got %s", got)
		}
		if u := jsonclient.PushesOf(msgs, "rc:orders", "unsubscribe"); len(u) > 0 {
			t.Fatalf("a subscriber was unsubscribed for the rows it may not see: %v", u)
		}
	}
	calls := check.callsSoFar()
	if len(calls) != 5 || fmt.Sprint(calls[0]) != "[u1 u2]" {
		t.Fatalf("check calls %v: want one per publication, with the two distinct users", calls)
	}

	// Recovery and history give each user its own rows only.
	r := n.dial(t)
	r.Connect("u2")
	res := r.MustSubscribe(2, "rc:orders", recoverReq(0, sp.Epoch))
	if res["recovered"] != true || fmt.Sprint(pubOffsets(t, res["publications"])) != "[2 5]" {
		t.Fatalf("u2 recovered %v", res)
	}
	h := u1.Call(`{"id":7,"history":{"channel":"rc:orders","limit":-1}}`)
	if got := fmt.Sprint(pubOffsets(t, jsonclient.Path(h, "history", "publications"))); got != "[1 4]" {
		t.Fatalf("u1's history: %s (%v)", got, h)
	}
	// The client goes on at the top: the rows it does not see are no gap.
	if _, err := n.hub.Publish(context.Background(), "rc:orders", []byte(`{"n":6,"owner":"u2"}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(pubNs(t, jsonclient.PushesOf(r.Drain(), "rc:orders", "pub"))); got != "[6]" {
		t.Fatalf("after recovery u2 got %s", got)
	}
}

// TestRowCheckCacheRecovery: cache recovery gives the latest publication
// the user may see, not the channel's latest.
func TestRowCheckCacheRecovery(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{RowCheck: &ownerCheck{}, Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("rc", hub.NamespaceOptions{AllowSubscribeForClient: true, ForceRecovery: true, ForceRecoveryMode: hub.RecoveryCache,
			HistorySize: 10, HistoryTTL: time.Minute}),
	}}})
	for i, owner := range []string{"u1", "u2", "u1", "u2"} {
		if _, err := n.hub.Publish(context.Background(), "rc:c", fmt.Appendf(nil, `{"n":%d,"owner":%q}`, i+1, owner), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := n.dial(t)
	c.Connect("u1")
	res := c.MustSubscribe(2, "rc:c", `"recover":true`)
	if fmt.Sprint(pubOffsets(t, res["publications"])) != "[3]" {
		t.Fatalf("u1's cache recovery: %v, want its latest row (offset 3)", res)
	}
}
