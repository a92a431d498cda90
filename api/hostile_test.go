package api_test

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/api"
)

// TestChannelControlCharacters: the API refuses a channel name with a
// control character with 107 and a message that says why.
func TestChannelControlCharacters(t *testing.T) {
	n := startNode(t, api.Config{})
	for _, ch := range []string{`a\u0000b`, `a\nb`, `plain:\u001b[31m`, `a\u007f`} {
		got := n.expectError(t, "publish", `{"channel":"`+ch+`","data":1}`, 107)
		if !strings.Contains(got, "control character") {
			t.Errorf("publish to %s: message %q does not name the control character", ch, got)
		}
	}
}
