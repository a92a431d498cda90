package config

import (
	"fmt"
	"strings"
)

// The key map of docs/migrating-from-centrifugo.md is generated from the
// key table (centrifugo_keys.go) between two markers:
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

// centrifugoKeyMap renders the key table (centrifugo_keys.go).
func centrifugoKeyMap() string {
	var b strings.Builder
	b.WriteString("| Centrifugo key | Herald key | conversion | note |\n|---|---|---|---|\n")
	for _, r := range newCFTables().rows {
		herald := "none"
		if r.Herald != "" {
			herald = codeList(r.Herald)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.Key, herald, r.Action.doc(r), cell(r.Note))
	}
	return b.String()
}

// doc says in the key map what the importer does with the key of r.
func (a cfAction) doc(r centrifugoKey) string {
	switch a {
	case cfRename:
		if r.Herald == r.Key {
			return "taken as it is"
		}
		return "renamed"
	case cfConvert:
		return "converted"
	case cfDrop:
		return "not needed: any value is taken"
	case cfTune:
		return "not needed: any value is taken, and one other than Centrifugo's default is named in the start-up log"
	case cfRefuse:
		if len(r.Takes) > 0 {
			return "taken at Centrifugo's default, off, empty or " + codeList(strings.Join(r.Takes, ", ")) + "; any other value is refused"
		}
		return "taken at Centrifugo's default, off or empty; any other value is refused"
	}
	return fmt.Sprintf("action %d", int(a))
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
