package hub_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/transport/websocket"
)

// smallReceiveBuffer dials with a 4 KiB socket receive buffer, so that a
// client that stops reading backs the server up quickly.
func smallReceiveBuffer() *gws.Dialer {
	nd := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = setReceiveBuffer(fd, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	return &gws.Dialer{HandshakeTimeout: 5 * time.Second, NetDialContext: nd.DialContext}
}

type disconnectEvent struct {
	user   string
	code   uint32
	reason string
}

// recordDisconnects is an OnDisconnect that sends each disconnect to ch.
func recordDisconnects(ch chan<- disconnectEvent) func(*hub.Client, hub.DisconnectEvent) {
	return func(c *hub.Client, ev hub.DisconnectEvent) { ch <- disconnectEvent{c.User(), ev.Code, ev.Reason} }
}

// publishUntilSlowClosed publishes padded publications to channel "s",
// each paced by fast (who must receive every one), until the client "slow"
// is closed with 3008 (at most 1,000), then 20 more, so that the slow
// client's end shows nothing queued after its close. It returns how many
// it published.
func publishUntilSlowClosed(t *testing.T, n *node, fast *rawClient, disconnects <-chan disconnectEvent, padBytes int) int {
	t.Helper()
	pad := strings.Repeat("x", padBytes)
	seq := 0
	publish := func() {
		t.Helper()
		seq++
		if _, err := n.hub.Publish(context.Background(), "s", []byte(`{"seq":`+strconv.Itoa(seq)+`,"pad":"`+pad+`"}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		// Pace the publisher by the fast reader, so only the slow one
		// falls behind.
		if m := fast.Next(); jsonclient.Num(jsonclient.Path(m, "push", "pub", "data", "seq")) != int64(seq) {
			t.Fatalf("fast subscriber: want seq %d, got %.200v", seq, m)
		}
	}
	// A client over its queue limit is closed once a write to it has been
	// blocked for a while (the hub's slowWriteStall, 500 ms), not at the
	// first overflow: the loop is bounded by time, since a fast transport
	// gets through many publications before then. The close needs the
	// socket buffers full (about 4 MB here), and under -race on 2 busy
	// cores a publication paced by the fast reader took up to 90 ms:
	// 10 s was too short there (53 publications), so the bound is 60 s.
	var ev disconnectEvent
	deadline := time.Now().Add(60 * time.Second)
wait:
	for {
		select {
		case ev = <-disconnects:
			break wait
		default:
		}
		if time.Now().After(deadline) || seq == 200000 {
			t.Fatalf("slow client still connected after %d publications of %d bytes", seq, padBytes)
		}
		publish()
	}
	if ev.user != "slow" || ev.code != 3008 || ev.reason != "slow" {
		t.Fatalf("disconnect %+v, want the slow client with 3008 slow", ev)
	}
	t.Logf("slow client closed after %d publications", seq)
	for range 20 {
		publish()
	}
	return seq
}

// TestSlowClient has a subscriber stop reading while publications keep
// coming: once its write queue passes QueueMaxSize it is closed with 3008,
// and a subscriber that reads gets every publication, before and after.
func TestSlowClient(t *testing.T) {
	t.Parallel()
	disconnects := make(chan disconnectEvent, 8)
	// A long write timeout makes the queue limit, not a write timeout
	// (3009), end the slow connection.
	n := startNodeWS(t, hub.Config{
		Channels: openChannels(),
		Client:   hub.ClientConfig{QueueMaxSize: 256 << 10},
		Handlers: hub.Handlers{OnDisconnect: recordDisconnects(disconnects)},
	}, websocket.Config{WriteTimeout: 10 * time.Second})

	slow := n.dialDialer(t, smallReceiveBuffer(), nil)
	slow.Connect("slow")
	slow.MustSubscribe(2, "s", "")
	fast := n.dial(t)
	fast.Connect("fast")
	fast.MustSubscribe(2, "s", "")

	publishUntilSlowClosed(t, n, fast, disconnects, 32<<10)
	// The slow client, reading again, finds the close code after the
	// messages that were written before the limit was passed.
	slow.ExpectClose(3008, "slow")
	select {
	case ev := <-disconnects:
		t.Fatalf("unexpected disconnect %+v", ev)
	default:
	}
}
