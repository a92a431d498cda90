// Package docmarker rewrites the generated parts of a Markdown document:
// what lies between an opening marker "<!-- NAME: spec -->" and the
// closing "<!-- end NAME -->" is replaced by what a package renders from
// the spec, so that tables the code produces stay in the docs and a test
// can check them.
package docmarker

import (
	"fmt"
	"strings"
)

// Rewrite replaces the body of every NAME marker of doc with render(spec),
// between blank lines. A document without the marker is an error: the
// caller expected generated parts there.
func Rewrite(doc, name string, render func(spec string) (string, error)) (string, error) {
	open, closing := "<!-- "+name+":", "<!-- end "+name+" -->"
	var b strings.Builder
	rest := doc
	found := 0
	for {
		i := strings.Index(rest, open)
		if i < 0 {
			b.WriteString(rest)
			break
		}
		end := strings.Index(rest[i:], "-->")
		if end < 0 {
			return "", fmt.Errorf("unterminated marker %q", rest[i:min(len(rest), i+60)])
		}
		spec := strings.TrimSpace(rest[i+len(open) : i+end])
		closeAt := strings.Index(rest[i:], closing)
		if closeAt < 0 {
			return "", fmt.Errorf("marker %q: no %s after it", spec, closing)
		}
		body, err := render(spec)
		if err != nil {
			return "", fmt.Errorf("marker %q: %w", spec, err)
		}
		b.WriteString(rest[:i+end+len("-->")])
		b.WriteString("\n\n" + body + "\n")
		b.WriteString(closing)
		rest = rest[i+closeAt+len(closing):]
		found++
	}
	if found == 0 {
		return "", fmt.Errorf("no %s markers found", open)
	}
	return b.String(), nil
}
