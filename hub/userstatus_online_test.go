package hub_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
)

// TestUserStatusOnline: with user_status_online_interval, a connected
// user's status gets an online time (and no active one); a user never
// connected has none; delete_user_status forgets it.
func TestUserStatusOnline(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Client: hub.ClientConfig{UserStatusOnlineInterval: 10 * time.Millisecond}})
	ctx := accessCtx(t)
	before := time.Now().Unix()
	n.dial(t).Connect("carol")
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		st, err := n.hub.GetUserStatus(ctx, []string{"carol", "nobody"})
		if err != nil {
			t.Fatal(err)
		}
		if st[1].Online != 0 {
			t.Fatalf("a user never connected is online: %+v", st[1])
		}
		if st[0].Online >= before {
			if st[0].Active != 0 {
				t.Errorf("online marked the user active: %+v", st[0])
			}
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("carol's online time never written: %+v", st[0])
		}
	}
	if err := n.hub.DeleteUserStatus(ctx, []string{"carol"}); err != nil {
		t.Fatal(err)
	}
}
