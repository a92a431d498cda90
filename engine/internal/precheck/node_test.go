package precheck

import (
	"strings"
	"testing"
)

func TestNodeID(t *testing.T) {
	a, err := NodeID("")
	if err != nil || a == "" {
		t.Fatalf("empty id: %q, %v; want a random one", a, err)
	}
	if b, _ := NodeID(""); a == b {
		t.Fatalf("two random ids are both %q", a)
	}
	for _, ok := range []string{"node1-1234-abcd", "a.b:c_d", strings.Repeat("x", MaxNodeID)} {
		if got, err := NodeID(ok); err != nil || got != ok {
			t.Errorf("NodeID(%q) = %q, %v; want it unchanged", ok, got, err)
		}
	}
	for _, bad := range []string{"a b", "a\nb", "é", "a\x00", strings.Repeat("x", MaxNodeID+1)} {
		if _, err := NodeID(bad); err == nil {
			t.Errorf("NodeID(%q) accepted", bad)
		}
	}
}

func TestNodeToken(t *testing.T) {
	tok := NodeToken("node1")
	if len(tok) != 20 || strings.Trim(tok, "0123456789abcdef") != "" {
		t.Fatalf("NodeToken = %q, want 20 lower-case hex digits", tok)
	}
	if tok != NodeToken("node1") || tok == NodeToken("node2") {
		t.Fatal("NodeToken is not a function of the id alone")
	}
}
