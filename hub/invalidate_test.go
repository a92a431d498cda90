package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestInvalidateState: a channel's subscribers get the unsubscribe push
// 2502, by name also when compacted; a server-side subscription, which
// the client cannot subscribe again, closes its connection with 3014, as
// invalidating a user's connections does.
func TestInvalidateState(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: compactionNamespaces()}})
	ctx := context.Background()
	a := n.dial(t)
	a.Connect("a")
	a.MustSubscribe(2, "cc:room", `"flag":1`)
	a.MustSubscribe(3, "cc:other", "")
	server := n.dial(t)
	server.ConnectToken(token(t, auth.ConnectClaims{User: "s", Channels: []string{"cc:room"}}))
	if err := n.hub.InvalidateState(ctx, "", "cc:room", "", ""); err != nil {
		t.Fatal(err)
	}
	for {
		m := a.Next()
		if u, ok := jsonclient.Path(m, "push", "unsubscribe").(map[string]any); ok {
			if jsonclient.Path(m, "push", "channel") != "cc:room" || jsonclient.Num(u["code"]) != 2502 {
				t.Fatalf("unsubscribe push %v, want 2502 in cc:room", m)
			}
			break
		}
	}
	server.ExpectClose(3014, "state invalidated")
	testenv.Eventually(t, "cc:room without subscribers, cc:other kept", 5*time.Second, func() bool {
		subs := n.hub.Channels()
		return subs["cc:other"] == 1 && subs["cc:room"] == 0
	})
	if err := n.hub.InvalidateState(ctx, "a", "", "", ""); err != nil {
		t.Fatal(err)
	}
	a.ExpectClose(3014, "state invalidated")
}
