package auth

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Channel capabilities, as Centrifugo PRO's (centrifugal.dev
// docs/pro/capabilities.md, and the resolver of that site,
// src/components/capabilities/engine.js, which follows its source): a
// connection token's caps claim (or a connect or refresh proxy result's
// caps) is a list of objects {channels, allow, match}; a subscription
// token's allow claim (or a subscribe proxy result's allow) is a list of
// operations. An operation on a channel is granted when any object both
// lists the operation and has a channel matching it, so a channel's
// capabilities are the union of the objects that match it and their order
// does not matter. Capabilities only grant: they never take away what the
// namespace allows.

// Ops is a set of channel operations a capability grants.
type Ops uint8

// The operations, named in tokens as sub, pub, hst and prs.
const (
	OpSubscribe Ops = 1 << iota // sub: subscribe
	OpPublish                   // pub: publish
	OpHistory                   // hst: history, and positioned or recoverable subscriptions
	OpPresence                  // prs: presence and presence_stats, and join/leave pushes
)

var opNames = [...]struct {
	name string
	op   Ops
}{{"sub", OpSubscribe}, {"pub", OpPublish}, {"hst", OpHistory}, {"prs", OpPresence}}

// ParseOps reads a list of operation names (sub, pub, hst, prs); an
// unknown name is an error (wrapping ErrInvalidCaps) naming it.
func ParseOps(names []string) (Ops, error) {
	ops, err := parseOps(names)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidCaps, err)
	}
	return ops, nil
}

func parseOps(names []string) (Ops, error) {
	var ops Ops
	for i, n := range names {
		op, ok := opNamed(n)
		if !ok {
			return 0, fmt.Errorf("allow[%d]: unknown capability %q (want sub, pub, hst or prs)", i, n)
		}
		ops |= op
	}
	return ops, nil
}

func opNamed(n string) (Ops, bool) {
	for _, o := range opNames {
		if o.name == n {
			return o.op, true
		}
	}
	return 0, false
}

// Names lists the operations of o, in the order sub, pub, hst, prs.
func (o Ops) Names() []string {
	var out []string
	for _, n := range opNames {
		if o&n.op != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// ChannelCaps is one object of a caps claim, as it is written.
type ChannelCaps struct {
	// Channels are the channel names, or patterns per Match.
	Channels []string `json:"channels"`
	// Allow lists the operations granted on them: sub, pub, hst, prs.
	Allow []string `json:"allow"`
	// Match is how Channels are compared with a channel: "" exact,
	// "wildcard" ('*' any run of characters, '?' one), "doublestar" ('*'
	// any run without '/', '**' any run, '?' one character but '/'), or
	// "regex" (Go regular expression syntax, unanchored as Centrifugo's).
	Match string `json:"match,omitempty"`
}

// The bounds on a caps list: the claim is read on every connect with a
// new token, so its cost is bounded here rather than trusted.
const (
	MaxCapObjects   = 64   // objects in one caps list
	MaxCapChannels  = 256  // channel entries across the whole list
	MaxCapEntrySize = 1024 // bytes of one channel entry
)

// The match kinds.
const (
	MatchExact      = ""
	MatchWildcard   = "wildcard"
	MatchDoublestar = "doublestar"
	MatchRegex      = "regex"
)

// Caps is a compiled caps list: patterns compiled once (per token, which
// the verifier's cache keeps) to regular expressions, which match in time
// linear in the channel's length.
type Caps struct {
	objects []capObject
	source  []ChannelCaps
}

// List returns the caps list as it was written (nil for nil Caps).
func (c *Caps) List() []ChannelCaps {
	if c == nil {
		return nil
	}
	return c.source
}

type capObject struct {
	ops      Ops
	match    string
	channels []string
	regexps  []*regexp.Regexp // for every match but exact, one per channel
}

// CompileCaps checks and compiles a caps list; nil or empty gives nil
// (no capabilities). An error wraps ErrInvalidCaps and names the object
// and what is wrong with it.
func CompileCaps(list []ChannelCaps) (*Caps, error) {
	c, err := compileCaps(list)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidCaps, err)
	}
	return c, nil
}

func compileCaps(list []ChannelCaps) (*Caps, error) {
	if len(list) == 0 {
		return nil, nil
	}
	if len(list) > MaxCapObjects {
		return nil, fmt.Errorf("caps: %d objects, at most %d", len(list), MaxCapObjects)
	}
	total := 0
	c := &Caps{objects: make([]capObject, 0, len(list)), source: list}
	for i, o := range list {
		ops, err := parseOps(o.Allow)
		if err != nil {
			return nil, fmt.Errorf("caps[%d].%w", i, err)
		}
		if ops == 0 {
			return nil, fmt.Errorf("caps[%d].allow: empty, want some of sub, pub, hst, prs", i)
		}
		if len(o.Channels) == 0 {
			return nil, fmt.Errorf("caps[%d].channels: empty", i)
		}
		if total += len(o.Channels); total > MaxCapChannels {
			return nil, fmt.Errorf("caps: more than %d channel entries", MaxCapChannels)
		}
		obj := capObject{ops: ops, match: o.Match, channels: o.Channels}
		for j, ch := range o.Channels {
			if err := checkCapEntry(ch, o.Match); err != nil {
				return nil, fmt.Errorf("caps[%d].channels[%d]: %w", i, j, err)
			}
			if o.Match != MatchExact {
				src := ch
				if o.Match != MatchRegex {
					src = globRegexp(ch, o.Match == MatchDoublestar)
				}
				re, err := regexp.Compile(src)
				if err != nil {
					return nil, fmt.Errorf("caps[%d].channels[%d]: %w", i, j, err)
				}
				obj.regexps = append(obj.regexps, re)
			}
		}
		c.objects = append(c.objects, obj)
	}
	return c, nil
}

func checkCapEntry(ch, match string) error {
	switch match {
	case MatchExact, MatchWildcard, MatchDoublestar, MatchRegex:
	default:
		return fmt.Errorf("unknown match %q (want none, %q, %q or %q)", match, MatchWildcard, MatchDoublestar, MatchRegex)
	}
	if ch == "" {
		return errors.New("empty channel")
	}
	if len(ch) > MaxCapEntrySize {
		return fmt.Errorf("%d bytes, at most %d", len(ch), MaxCapEntrySize)
	}
	if !utf8.ValidString(ch) {
		return errors.New("not valid UTF-8")
	}
	return nil
}

// Allows reports whether the list grants op on channel ch; a nil Caps
// grants nothing.
func (c *Caps) Allows(op Ops, ch string) bool {
	if c == nil {
		return false
	}
	for i := range c.objects {
		o := &c.objects[i]
		if o.ops&op == 0 {
			continue
		}
		if o.matches(ch) {
			return true
		}
	}
	return false
}

func (o *capObject) matches(ch string) bool {
	for i, p := range o.channels {
		if o.match == MatchExact && p == ch || o.match != MatchExact && o.regexps[i].MatchString(ch) {
			return true
		}
	}
	return false
}

// globRegexp translates a wildcard or doublestar pattern to an anchored
// regular expression, so that all three pattern kinds match in time linear
// in the channel's length (Go's regexp guarantees it). Wildcard: '*' any
// run of characters, '?' any one. Doublestar: '*' and '?' stop at '/',
// '**' is any run. Every other character is literal.
func globRegexp(p string, doublestar bool) string {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(p); {
		switch {
		case doublestar && strings.HasPrefix(p[i:], "**"):
			b.WriteString(`.*`)
			i += 2
		case p[i] == '*' && doublestar:
			b.WriteString(`[^/]*`)
			i++
		case p[i] == '*':
			b.WriteString(`.*`)
			i++
		case p[i] == '?' && doublestar:
			b.WriteString(`[^/]`)
			i++
		case p[i] == '?':
			b.WriteString(`.`)
			i++
		default:
			_, n := utf8.DecodeRuneInString(p[i:])
			b.WriteString(regexp.QuoteMeta(p[i : i+n]))
			i += n
		}
	}
	b.WriteString(`)$`)
	return b.String()
}
