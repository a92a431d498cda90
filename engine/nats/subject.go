package nats

import (
	"strings"

	"github.com/heraldhq/herald/engine/internal/precheck"
)

// A NATS subject is dot-separated tokens without whitespace, where "*" and
// ">" are wildcards. A Herald channel may contain any of those, so it
// becomes one token with the troublesome bytes escaped as %XX: readable for
// the usual names, and distinct channels never share a subject because
// '%' itself is escaped.
//
//	<prefix>.c.<escaped channel>   publications and join/leave of a channel
//	<prefix>.control               control messages to every node
//	<prefix>.node.<digest of id>   control messages to one node alone

// subjectSafe reports whether b may stand unescaped in a subject token.
func subjectSafe(b byte) bool {
	return b > ' ' && b < 0x7f && b != '.' && b != '*' && b != '>' && b != '%'
}

// escapeToken returns ch as one subject token.
func escapeToken(ch string) string {
	n := 0
	for i := 0; i < len(ch); i++ {
		if !subjectSafe(ch[i]) {
			n++
		}
	}
	if n == 0 {
		return ch
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(ch) + 2*n)
	for i := 0; i < len(ch); i++ {
		c := ch[i]
		if subjectSafe(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

// subjects names the engine's subjects under a prefix.
type subjects struct {
	chanPfx string
	control string
	nodePfx string
}

func newSubjects(prefix string) subjects {
	return subjects{chanPfx: prefix + ".c.", control: prefix + ".control", nodePfx: prefix + ".node."}
}

// node is the subject of the control messages addressed to node id alone;
// the id is digested, since it may hold bytes a subject token cannot.
func (s subjects) node(id string) string { return s.nodePfx + precheck.NodeToken(id) }

func (s subjects) channel(ch string) string { return s.chanPfx + escapeToken(ch) }
