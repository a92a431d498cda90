// Package tagsfilter compiles, validates and evaluates the tags filter of
// a subscription (SubscribeRequest.tf, client.proto's FilterNode), and
// interns the filters of a node's subscriptions so that subscribers with
// the same filter share one evaluation per publication. It knows nothing
// of clients or channels: the hub holds a Table and a Memo per delivery.
package tagsfilter

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/heraldhq/herald/protocol"
)

// Bounds of a subscription's tags filter (SubscribeRequest.tf). The
// reference has none besides the message size; Herald bounds what one
// subscription may make every publication of its channel cost. A filter
// over a bound is refused with error 107, as a malformed one is.
const (
	maxFilterDepth    = 8    // nesting of and/or/not
	maxFilterNodes    = 64   // nodes in the whole tree
	maxFilterValues   = 128  // values in all in/nin lists together
	maxFilterValueLen = 1024 // bytes of one key or value
)

// Leaf comparisons, as client.proto documents FilterNode.cmp.
const (
	cmpEq  = "eq"
	cmpNeq = "neq"
	cmpIn  = "in"
	cmpNin = "nin"
	cmpEx  = "ex"
	cmpNex = "nex"
	cmpSw  = "sw"
	cmpEw  = "ew"
	cmpCt  = "ct"
	cmpLt  = "lt"
	cmpLte = "lte"
	cmpGt  = "gt"
	cmpGte = "gte"
)

// Branch operations (FilterNode.op); the empty op is a leaf.
const (
	opAnd = "and"
	opOr  = "or"
	opNot = "not"
)

// Filter is a validated filter with the canonical form that names it:
// subscribers whose filters have the same canonical form share one
// evaluation per publication (Memo).
type Filter struct {
	root      *node
	canonical string
	// refs counts the registered subscriptions that use this filter
	// (Table); a filter in use by one only is evaluated directly.
	refs atomic.Int32
}

// Canonical is the filter's canonical form: filters that mean the same in
// the same written order have the same one.
func (f *Filter) Canonical() string { return f.canonical }

// Table interns the filters of registered subscriptions, so that the
// subscriptions of a node with the same filter hold one copy of it and
// share its evaluation (Memo). The zero Table is ready to use.
type Table struct {
	mu sync.Mutex
	m  map[string]*Filter
}

// Intern returns the table's filter of f's canonical form, counting one
// more user; nil for nil.
func (t *Table) Intern(f *Filter) *Filter {
	if f == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = make(map[string]*Filter)
	}
	if have, ok := t.m[f.canonical]; ok {
		have.refs.Add(1)
		return have
	}
	f.refs.Store(1)
	t.m[f.canonical] = f
	return f
}

// Release counts one user less of f (nil: nothing), dropping the filter
// with its last user.
func (t *Table) Release(f *Filter) {
	if f == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if f.refs.Add(-1) == 0 && t.m[f.canonical] == f {
		delete(t.m, f.canonical)
	}
}

// Counts is the number of distinct filters the table holds, and the
// number of users they have together.
func (t *Table) Counts() (filters, users int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range t.m {
		filters++
		users += int(f.refs.Load())
	}
	return filters, users
}

// Compile validates f and returns it with its canonical form, or the
// reason it is refused (for the log; the hub answers the client with
// error 107).
func Compile(f *protocol.FilterNode) (*Filter, string) {
	nodes, values := 0, 0
	if why := checkFilterNode(f, 1, &nodes, &values); why != "" {
		return nil, why
	}
	var b strings.Builder
	canonicalFilter(&b, f)
	return &Filter{root: compileNode(f), canonical: b.String()}, ""
}

// node is a validated FilterNode ready to evaluate: a numeric
// comparison's value is parsed once, here, instead of at every
// publication.
type node struct {
	op, key, cmp, val string
	vals              []string
	num               decimal // val, for lt, lte, gt and gte
	numOK             bool    // val is a number
	nodes             []*node
}

func compileNode(f *protocol.FilterNode) *node {
	n := &node{op: f.Op, key: f.Key, cmp: f.Cmp, val: f.Val, vals: f.Vals}
	switch f.Cmp {
	case cmpLt, cmpLte, cmpGt, cmpGte:
		n.num, n.numOK = parseDecimal(f.Val)
	}
	for _, c := range f.Nodes {
		n.nodes = append(n.nodes, compileNode(c))
	}
	return n
}

func checkFilterNode(f *protocol.FilterNode, depth int, nodes, values *int) string {
	if depth > maxFilterDepth {
		return "tags filter nested too deep"
	}
	if *nodes++; *nodes > maxFilterNodes {
		return "tags filter has too many nodes"
	}
	if len(f.Key) > maxFilterValueLen || len(f.Val) > maxFilterValueLen {
		return "tags filter key or value too long"
	}
	switch f.Op {
	case "":
		if len(f.Nodes) > 0 {
			return "tags filter leaf with child nodes"
		}
		return checkFilterLeaf(f, values)
	case opAnd, opOr:
		if len(f.Nodes) == 0 {
			return "tags filter " + f.Op + " without child nodes"
		}
	case opNot:
		if len(f.Nodes) != 1 {
			return "tags filter not must have exactly one child node"
		}
	default:
		return "unknown tags filter op"
	}
	if f.Key != "" || f.Cmp != "" || f.Val != "" || len(f.Vals) > 0 {
		return "tags filter " + f.Op + " with leaf fields"
	}
	for _, n := range f.Nodes {
		if n == nil {
			return "tags filter with an empty node"
		}
		if why := checkFilterNode(n, depth+1, nodes, values); why != "" {
			return why
		}
	}
	return ""
}

func checkFilterLeaf(f *protocol.FilterNode, values *int) string {
	switch f.Cmp {
	case cmpEq, cmpNeq, cmpSw, cmpEw, cmpCt, cmpLt, cmpLte, cmpGt, cmpGte:
		if f.Val == "" || len(f.Vals) > 0 {
			return "tags filter " + f.Cmp + " needs val and no vals"
		}
	case cmpIn, cmpNin:
		if len(f.Vals) == 0 || f.Val != "" {
			return "tags filter " + f.Cmp + " needs vals and no val"
		}
		if *values += len(f.Vals); *values > maxFilterValues {
			return "tags filter has too many values"
		}
		for _, v := range f.Vals {
			if len(v) > maxFilterValueLen {
				return "tags filter value too long"
			}
		}
	case cmpEx, cmpNex:
		if f.Val != "" || len(f.Vals) > 0 {
			return "tags filter " + f.Cmp + " takes no value"
		}
	case "":
		return "tags filter leaf without cmp"
	default:
		return "unknown tags filter comparison"
	}
	if f.Key == "" && f.Cmp != cmpEx && f.Cmp != cmpNex {
		return "tags filter leaf without key"
	}
	return ""
}

// canonicalFilter writes f so that filters meaning the same thing in the
// same written order read the same, and in/nin lists in any order too.
// Lengths prefix every string, so no value can forge a boundary.
func canonicalFilter(b *strings.Builder, f *protocol.FilterNode) {
	str := func(s string) {
		b.WriteString(itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	b.WriteByte('(')
	str(f.Op)
	str(f.Key)
	str(f.Cmp)
	str(f.Val)
	if len(f.Vals) > 0 {
		vals := slices.Clone(f.Vals)
		slices.Sort(vals)
		for _, v := range slices.Compact(vals) {
			str(v)
		}
	}
	for _, n := range f.Nodes {
		canonicalFilter(b, n)
	}
	b.WriteByte(')')
}

func itoa(n int) string {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	return string(buf[i:])
}

// Match reports whether a publication with tags passes the filter. The
// filter was validated, so every op and cmp is known.
func (f *Filter) Match(tags map[string]string) bool {
	var m Memo
	return m.matchNode(f.root, tags)
}

func (m *Memo) matchNode(f *node, tags map[string]string) bool {
	switch f.op {
	case opAnd:
		for _, n := range f.nodes {
			if !m.matchNode(n, tags) {
				return false
			}
		}
		return true
	case opOr:
		for _, n := range f.nodes {
			if m.matchNode(n, tags) {
				return true
			}
		}
		return false
	case opNot:
		return !m.matchNode(f.nodes[0], tags)
	}
	v, ok := tags[f.key]
	switch f.cmp {
	case cmpEq:
		return ok && v == f.val
	case cmpNeq:
		return !ok || v != f.val
	case cmpIn: // as the reference: a missing tag reads as ""
		return slices.Contains(f.vals, v)
	case cmpNin:
		return !slices.Contains(f.vals, v)
	case cmpEx:
		return ok
	case cmpNex:
		return !ok
	case cmpSw:
		return ok && strings.HasPrefix(v, f.val)
	case cmpEw:
		return ok && strings.HasSuffix(v, f.val)
	case cmpCt:
		return ok && strings.Contains(v, f.val)
	}
	// Numeric: as the reference, a missing or non-numeric tag value, or a
	// filter value that is not a number, does not match.
	if !ok || !f.numOK {
		return false
	}
	x, okx := m.number(f.key, v)
	if !okx {
		return false
	}
	c := compareDecimal(x, f.num)
	switch f.cmp {
	case cmpLt:
		return c < 0
	case cmpLte:
		return c <= 0
	case cmpGt:
		return c > 0
	default: // gte
		return c >= 0
	}
}

// shortNumber is the length of a tag value up to which parsing it again
// costs less than remembering it (Memo.number).
const shortNumber = 64

// number is the tag value v of key parsed as a decimal, parsed once per
// publication: every numeric comparison of every filter on key reads the
// same value, and parsing is linear in its length.
func (m *Memo) number(key, v string) (decimal, bool) {
	if len(v) <= shortNumber {
		return parseDecimal(v)
	}
	if p, ok := m.nums[key]; ok {
		return p.d, p.ok
	}
	if m.nums == nil {
		m.nums = make(map[string]parsedTag, 1)
	}
	d, ok := parseDecimal(v)
	m.nums[key] = parsedTag{d, ok}
	return d, ok
}

// parsedTag is a tag value read as a number, and whether it is one.
type parsedTag struct {
	d  decimal
	ok bool
}

// decimal is a parsed decimal number: its sign and its digits without
// leading zeros before the point or trailing zeros after it, slices of
// the string it was read from (no allocation).
type decimal struct {
	neg         bool
	whole, frac string
}

// parseDecimal reads [+-]digits[.digits] (at least one digit), exactly:
// tag values such as prices compare without float rounding.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	if s != "" && (s[0] == '-' || s[0] == '+') {
		d.neg = s[0] == '-'
		s = s[1:]
	}
	ip, fp, dot := strings.Cut(s, ".")
	if ip == "" && fp == "" || dot && fp == "" {
		return d, false // no digits, or "5."
	}
	if !allDigits(ip) || !allDigits(fp) {
		return d, false
	}
	d.whole = strings.TrimLeft(ip, "0")
	d.frac = strings.TrimRight(fp, "0")
	if d.whole == "" && d.frac == "" {
		d.neg = false // -0 == 0
	}
	return d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// compareDecimal returns -1, 0 or 1 as x is less than, equal to or
// greater than y.
func compareDecimal(x, y decimal) int {
	if x.neg != y.neg {
		if x.neg {
			return -1
		}
		return 1
	}
	c := compareMagnitude(x, y)
	if x.neg {
		return -c
	}
	return c
}

func compareMagnitude(x, y decimal) int {
	if len(x.whole) != len(y.whole) {
		if len(x.whole) < len(y.whole) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(x.whole, y.whole); c != 0 {
		return c
	}
	// Same integer part: compare the fractions digit by digit, the shorter
	// padded with zeros.
	n := max(len(x.frac), len(y.frac))
	for i := 0; i < n; i++ {
		a, b := byte('0'), byte('0')
		if i < len(x.frac) {
			a = x.frac[i]
		}
		if i < len(y.frac) {
			b = y.frac[i]
		}
		if a != b {
			if a < b {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Memo remembers, for one publication, the result of each filter shared by
// several subscriptions, so that each distinct filter is evaluated once
// whatever the number of subscribers that share it (interned: one
// *Filter). The zero Memo is ready; it allocates only when a shared filter
// is met. One goroutine uses a Memo.
type Memo struct {
	m    map[*Filter]bool
	nums map[string]parsedTag // long tag values read as numbers, by key
}

// Passes reports whether the publication, with tags, passes f. A filter
// of one subscriber is evaluated directly, cheaper than remembering the
// result. Every call on one Memo must be given the same tags.
func (m *Memo) Passes(f *Filter, tags map[string]string) bool {
	if f.refs.Load() < 2 {
		return m.matchNode(f.root, tags)
	}
	if r, ok := m.m[f]; ok {
		return r
	}
	if m.m == nil {
		m.m = make(map[*Filter]bool, 4)
	}
	r := m.matchNode(f.root, tags)
	m.m[f] = r
	return r
}
