package hub_test

import (
	"fmt"
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
		b.set("live", `"l1"`, 1)
		c.Call(trackCmd(3, tc.ch, "u1", expired, "old"))
		c.Call(trackCmd(4, tc.ch, "u1", time.Now().Add(time.Hour).Unix(), "live"))
		// The keys of one poll are pushed in any order, but before the
		// next poll starts. Live goes to version 2, then 3, each set once
		// the previous one arrived: the poll that pushes version 2 asks
		// both keys, so once version 3 arrives a push of "old" would have
		// come.
		sawOld := false
		for seen := uint64(0); seen < 3; {
			pub := nextPub(t, c)
			sawOld = sawOld || pub["key"] == "old"
			if v := uint64(jsonclient.Num(pub["version"])); pub["key"] == "live" && v > seen {
				seen = v
				b.set("live", fmt.Sprintf(`"l%d"`, v+1), v+1)
			}
		}
		if sawOld != tc.wantOld {
			t.Fatalf("%s: pushed the expired key: %v, want %v", tc.ch, sawOld, tc.wantOld)
		}
	}
}
