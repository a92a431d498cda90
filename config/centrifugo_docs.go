package config

import (
	"fmt"
	"strings"
)

// The key map of docs/migrating-from-centrifugo.md is generated from the
// rule tables (centrifugo_rules.go) between two markers:
//
//	<!-- centrifugo-key-map -->
//	(generated)
//	<!-- end centrifugo-key-map -->

const (
	keyMapOpen  = "<!-- centrifugo-key-map -->"
	keyMapClose = "<!-- end centrifugo-key-map -->"
)

// HasCentrifugoKeyMap reports whether a Markdown document has the markers
// of the Centrifugo key map.
func HasCentrifugoKeyMap(doc string) bool { return strings.Contains(doc, keyMapOpen) }

// UpdateCentrifugoKeyMap rewrites the key map between the markers of doc.
func UpdateCentrifugoKeyMap(doc string) (string, error) {
	i := strings.Index(doc, keyMapOpen)
	if i < 0 {
		return "", fmt.Errorf("no %s marker found", keyMapOpen)
	}
	j := strings.Index(doc[i:], keyMapClose)
	if j < 0 {
		return "", fmt.Errorf("no %s after %s", keyMapClose, keyMapOpen)
	}
	return doc[:i+len(keyMapOpen)] + "\n\n" + centrifugoKeyMap() + "\n" + doc[i+j:], nil
}

// centrifugoKeyMap renders both tables.
func centrifugoKeyMap() string {
	tb := newCFTables()
	var b strings.Builder
	b.WriteString("Keys that Herald names or shapes differently:\n\n")
	b.WriteString("| Centrifugo key | Herald key | how |\n|---|---|---|\n")
	for _, r := range tb.rules {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Key, codeList(r.Herald), cell(r.Note))
	}
	b.WriteString("\nKeys that Herald has no key of that name for. The values in the second column change nothing " +
		"in Herald and are taken; any other value is refused at start with the note of the third column. " +
		"When Herald gains a key of the same name, it maps by name instead:\n\n")
	b.WriteString("| Centrifugo key | taken when | otherwise |\n|---|---|---|\n")
	for _, n := range tb.notes {
		if heraldKeyType(n.Key) != nil {
			continue // Herald has the key by now: it maps by name
		}
		taken := "off or empty"
		switch {
		case n.any:
			taken = "any value"
		case len(n.values) > 0:
			taken += ", or " + codeList(strings.Join(n.values, ", "))
		}
		note := n.Note
		if n.any && note == "" {
			note = "(every value is taken)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", n.Key, taken, cell(note))
	}
	return b.String()
}

// codeList writes "a, b" as "`a`, `b`".
func codeList(s string) string {
	parts := strings.Split(s, ", ")
	for i, p := range parts {
		parts[i] = "`" + p + "`"
	}
	return strings.Join(parts, ", ")
}

// cell turns a note into a table cell: 'quoted' words as code, no pipes.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		// A quote that opens or closes code: not an apostrophe inside a word.
		if c == '\'' {
			prevWord := i > 0 && isWordByte(s[i-1])
			nextWord := i+1 < len(s) && isWordByte(s[i+1])
			if !(prevWord && nextWord) {
				b.WriteByte('`')
				in = !in
				continue
			}
		}
		b.WriteByte(c)
	}
	if in {
		return strings.ReplaceAll(s, "'", "\"")
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
