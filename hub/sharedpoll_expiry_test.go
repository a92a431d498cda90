package hub_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// A key whose track signature expired 3 s ago still gets pushes within
// the default 25 s track_expired_extra_delay, and none past a 1 s one.
func TestSharedPollTrackExpiredExtraDelay(t *testing.T) {
	b := newPollBackend()
	b.set("old", `"o1"`, 1)
	b.set("live", `"l1"`, 1)
	opts := func(delay time.Duration) hub.NamespaceOptions {
		return hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionSharedPoll,
			SharedPoll: hub.SharedPollOptions{Mode: hub.SharedPollVersioned, RefreshInterval: 20 * time.Millisecond, TrackExpiredExtraDelay: delay}}
	}
	n := startNode(t, hub.Config{
		SharedPoll: hub.SharedPollConfig{HMACSecretKey: pollSecret},
		Handlers:   hub.Handlers{OnSharedPollRefresh: b.refresh},
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("short", opts(time.Second)),
			ns("dflt", opts(0)),
		}},
	})
	expired := time.Now().Add(-3 * time.Second).Unix()
	for _, tc := range []struct {
		ch      string
		wantOld bool
	}{{"short:a", false}, {"dflt:a", true}} {
		c := n.dial(t)
		c.Connect("u1")
		c.MustSubscribe(2, tc.ch, `"type":4`)
		c.Call(trackCmd(3, tc.ch, "u1", expired, "old"))
		c.Call(trackCmd(4, tc.ch, "u1", time.Now().Add(time.Hour).Unix(), "live"))
		// Pushes of one poll go out in order and polls follow one
		// another: once "live" at version 2 arrives, a push of "old"
		// at version 1 would have arrived before it.
		sawOld := false
		for live := false; !live; {
			pub := nextPub(t, c)
			sawOld = sawOld || pub["key"] == "old"
			if pub["key"] == "live" && jsonclient.Num(pub["version"]) == 1 {
				b.set("live", `"l2"`, 2)
			}
			live = pub["key"] == "live" && jsonclient.Num(pub["version"]) == 2
		}
		if sawOld != tc.wantOld {
			t.Fatalf("%s: pushed the expired key: %v, want %v", tc.ch, sawOld, tc.wantOld)
		}
	}
}
