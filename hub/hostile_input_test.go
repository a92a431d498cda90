package hub_test

import (
	"fmt"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// TestChannelNameControlCharacters: a channel name holding a control
// character (0x00–0x1F or 0x7F) is refused with 107 like any other
// malformed name, even where the namespace's channel_regex would match it,
// so that such names never reach logs, metrics labels or the engine.
func TestChannelNameControlCharacters(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{
		WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true},
		Namespaces: []hub.Namespace{
			ns("any", hub.NamespaceOptions{AllowSubscribeForClient: true, ChannelRegex: `^(?s:.*)$`}),
		},
	}})
	c := n.dial(t)
	c.Connect("u")
	id := 10
	for _, prefix := range []string{"", "any:"} {
		for _, b := range []byte{0x00, 0x01, '\t', '\n', '\r', 0x1b, 0x1f, 0x7f} {
			ch := fmt.Sprintf(`%sa\u%04xb`, prefix, b) // JSON escape: the name holds the byte itself
			id++
			if m := c.Subscribe(id, ch, ""); jsonclient.ErrorCode(m) != 107 {
				t.Fatalf("subscribe %q: want error 107, got %v", ch, m)
			}
		}
	}
	// Printable ASCII, the space included, is still a valid name.
	c.MustSubscribe(100, "a b~", "")
	c.MustSubscribe(101, "any:a b~", "")
}

// TestWhitespaceFrame: a frame of nothing but whitespace is refused like
// an empty one (3501), after connect as before it.
func TestWhitespaceFrame(t *testing.T) {
	t.Parallel()
	runBadInput(t, startNode(t, hub.Config{Channels: openChannels()}), []badInputCase{
		{"whitespace frame", true, false, " \n\t\r\n ", 3501},
		{"whitespace frame before connect", false, false, "\n", 3501},
	})
}
