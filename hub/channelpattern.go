package hub

import (
	"fmt"
	"strings"
)

// Channel patterns (ChannelConfig.Patterns), as Centrifugo PRO's
// (centrifugal.dev docs/pro/channel_patterns.md): a namespace whose name
// starts with '/' is a route over the whole channel name, segments
// separated by '/', where ':name' at the end of a segment is a variable
// that matches the rest of that segment ('/users/:name',
// '/personal/user_:user'). Static patterns win over patterns with
// variables; two patterns with variables that could match one channel are
// refused at load, so a channel never depends on the order of the list.
// The variables reach the namespace's CEL expressions as 'vars'
// (channelcel.go).

// patternSegment is one segment: a literal, or a literal prefix and a
// variable for the rest.
type patternSegment struct {
	prefix  string
	varName string // "" for a literal segment
}

// channelPattern is one namespace's pattern.
type channelPattern struct {
	name     string
	segments []patternSegment
}

// isPatternName reports whether a namespace name is a channel pattern.
func isPatternName(name string) bool { return strings.HasPrefix(name, "/") }

// parsePattern parses a namespace name that starts with '/'.
func parsePattern(name string) (*channelPattern, error) {
	if !isASCII(name) || hasControl(name) {
		return nil, fmt.Errorf("%q: a channel pattern must be printable ASCII", name)
	}
	p := &channelPattern{name: name}
	seen := map[string]bool{}
	for _, s := range strings.Split(name[1:], "/") {
		prefix, v, hasVar := strings.Cut(s, ":")
		switch {
		case s == "":
			return nil, fmt.Errorf("%q: empty segment", name)
		case !hasVar:
			p.segments = append(p.segments, patternSegment{prefix: s})
			continue
		case v == "" || strings.Contains(v, ":"):
			return nil, fmt.Errorf("%q: segment %q: want ':name' once, at the end of the segment", name, s)
		case seen[v]:
			return nil, fmt.Errorf("%q: variable %q twice", name, v)
		}
		seen[v] = true
		p.segments = append(p.segments, patternSegment{prefix: prefix, varName: v})
	}
	return p, nil
}

// static reports whether p has no variables.
func (p *channelPattern) static() bool {
	for _, s := range p.segments {
		if s.varName != "" {
			return false
		}
	}
	return true
}

// match reports whether ch matches p, and its variables (nil when p has
// none). A variable matches one or more characters of its segment.
func (p *channelPattern) match(ch string) (map[string]string, bool) {
	if !strings.HasPrefix(ch, "/") {
		return nil, false
	}
	rest := ch[1:]
	var vars map[string]string
	for i, s := range p.segments {
		seg, after, more := strings.Cut(rest, "/")
		if more != (i < len(p.segments)-1) {
			return nil, false
		}
		rest = after
		if s.varName == "" {
			if seg != s.prefix {
				return nil, false
			}
			continue
		}
		if len(seg) <= len(s.prefix) || !strings.HasPrefix(seg, s.prefix) {
			return nil, false
		}
		if vars == nil {
			vars = make(map[string]string, len(p.segments))
		}
		vars[s.varName] = seg[len(s.prefix):]
	}
	return vars, true
}

// overlaps reports whether some channel could match both p and q, both
// with variables.
func (p *channelPattern) overlaps(q *channelPattern) bool {
	if len(p.segments) != len(q.segments) {
		return false
	}
	for i, a := range p.segments {
		b := q.segments[i]
		switch {
		case a.varName == "" && b.varName == "":
			if a.prefix != b.prefix {
				return false
			}
		case a.varName == "":
			if len(a.prefix) <= len(b.prefix) || !strings.HasPrefix(a.prefix, b.prefix) {
				return false
			}
		case b.varName == "":
			if len(b.prefix) <= len(a.prefix) || !strings.HasPrefix(b.prefix, a.prefix) {
				return false
			}
		default:
			if !strings.HasPrefix(a.prefix, b.prefix) && !strings.HasPrefix(b.prefix, a.prefix) {
				return false
			}
		}
	}
	return true
}

// channelPatterns is the compiled patterns: static ones by name, the
// others in a list no two of whose entries overlap.
type channelPatterns struct {
	static map[string]*rule
	vars   []*rule
}

// add compiles the namespace r named name, or reports why not.
func (ps *channelPatterns) add(r *rule) error {
	p, err := parsePattern(r.name)
	if err != nil {
		return err
	}
	r.pattern = p
	if p.static() {
		if ps.static == nil {
			ps.static = make(map[string]*rule)
		}
		if _, dup := ps.static[r.name]; dup {
			return fmt.Errorf("%q: defined twice", r.name)
		}
		ps.static[r.name] = r
		return nil
	}
	for _, o := range ps.vars {
		if o.pattern.overlaps(p) {
			return fmt.Errorf("%q: conflicts with %q (a channel could match both)", r.name, o.name)
		}
	}
	ps.vars = append(ps.vars, r)
	return nil
}

// resolve finds the namespace of a channel that starts with '/'.
func (ps *channelPatterns) resolve(ch string) (*rule, bool) {
	if r, ok := ps.static[ch]; ok {
		return r, true
	}
	for _, r := range ps.vars {
		if _, ok := r.pattern.match(ch); ok {
			return r, true
		}
	}
	return nil, false
}

// patternVars is the variables of ch in the pattern of its namespace r
// (empty when r is no pattern or has none).
func patternVars(r *rule, ch string) map[string]string {
	if r.pattern == nil {
		return nil
	}
	vars, _ := r.pattern.match(ch)
	return vars
}
