package consumer

import (
	"os"
	"strings"
	"testing"
)

// TestOutboxColumnsDocumented: the outbox column types docs/consumers.md
// lists are the ones checked at the start (outboxColumns).
func TestOutboxColumnsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/consumers.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- outbox-columns -->\n", "<!-- end outbox-columns -->"
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/consumers.md: no %q … %q section", begin, end)
	}
	if got, want := doc[i+len(begin):j], outboxColumnsMarkdown(); got != want {
		t.Fatalf("docs/consumers.md lists the outbox columns as\n%s\nthe consumer checks\n%s", got, want)
	}
}
