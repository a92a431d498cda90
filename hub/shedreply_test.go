package hub_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// TestRepliesShedWhileNodeIsBehind: while the node's write queues hold
// more than client.node_queue_max_size (a client that stopped reading
// holds them), a history command and a recovering subscribe, whose
// replies may be large, get error 111; a history position (limit 0) and a
// plain subscribe are still answered. Before, every such reply was
// queued: 200 clients that asked for 6 MB and stopped reading took a node
// to 2.3 GB (bench/attacks.sh, noread).
func TestRepliesShedWhileNodeIsBehind(t *testing.T) {
	t.Parallel()
	n := startNodeMem(t, hub.Config{
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, AllowPublishForClient: true, AllowHistoryForClient: true,
			HistorySize: 10, HistoryTTL: time.Minute,
		}},
		Client: hub.ClientConfig{NodeQueueMaxSize: 64 << 10, QueueMaxSize: 1 << 20},
	})
	stalled, conn := n.dialMem(t)
	stalled.Connect("stalled")
	stalled.MustSubscribe(2, "big", "")
	conn.Stall()
	c := n.dial(t)
	c.Connect("fresh")
	pad := strings.Repeat("x", 30<<10)
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatal("100 publications of 30 KB to a stalled client and the node was never behind")
		}
		m := c.Call(`{"id":` + itoa(10+i) + `,"publish":{"channel":"big","data":{"p":"` + pad + `"}}}`)
		if jsonclient.ErrorCode(m) == 111 {
			break // publications are shed: the node is behind
		}
	}
	if m := c.Call(`{"id":200,"history":{"channel":"big","limit":5}}`); jsonclient.ErrorCode(m) != 111 {
		t.Fatalf("history with publications while the node is behind: %v", m)
	}
	if m := c.Call(`{"id":201,"history":{"channel":"big"}}`); m["history"] == nil {
		t.Fatalf("history position while the node is behind: %v", m)
	}
	if m := c.Subscribe(202, "big", `"recover":true,"offset":0,"epoch":"x","recoverable":true`); jsonclient.ErrorCode(m) != 111 {
		t.Fatalf("recovering subscribe while the node is behind: %v", m)
	}
	c.MustSubscribe(203, "other", "")
}
