package docmarker

import (
	"strings"
	"testing"
)

// TestRewrite: each marker's body is replaced by what its spec renders,
// the text around it is kept, and a missing or unterminated marker is an
// error.
func TestRewrite(t *testing.T) {
	render := func(spec string) (string, error) { return "[" + spec + "]", nil }
	got, err := Rewrite("a\n<!-- t: x -->\nold\n<!-- end t -->\nb\n<!-- t: y -->\n<!-- end t -->\n", "t", render)
	want := "a\n<!-- t: x -->\n\n[x]\n<!-- end t -->\nb\n<!-- t: y -->\n\n[y]\n<!-- end t -->\n"
	if err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
	for doc, msg := range map[string]string{
		"no markers":       "no <!-- t: markers found",
		"<!-- t: x -->\n":  `marker "x": no <!-- end t --> after it`,
		"<!-- t: x\n":      "unterminated marker",
		"<!-- u: x -->\n ": "no <!-- t: markers found",
	} {
		if _, err := Rewrite(doc, "t", render); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", doc, err, msg)
		}
	}
}
