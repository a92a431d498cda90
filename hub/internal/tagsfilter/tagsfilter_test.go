package tagsfilter

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/protocol"
)

func leaf(key, cmp, val string, vals ...string) *protocol.FilterNode {
	return &protocol.FilterNode{Key: key, Cmp: cmp, Val: val, Vals: vals}
}

func branch(op string, nodes ...*protocol.FilterNode) *protocol.FilterNode {
	return &protocol.FilterNode{Op: op, Nodes: nodes}
}

// TestTagsFilterOperators checks every comparison and logical operator of
// client.proto's FilterNode against the reference's documented examples,
// and the cases where each must not match.
func TestTagsFilterOperators(t *testing.T) {
	t.Parallel()
	tags := map[string]string{"ticker": "AAPL", "source": "NASDAQ", "price": "150.25", "category": "tech", "volume": "1000", "neg": "-3.5"}
	cases := []struct {
		f    *protocol.FilterNode
		want bool
	}{
		{leaf("ticker", "eq", "AAPL"), true},
		{leaf("ticker", "eq", "MSFT"), false},
		{leaf("missing", "eq", "x"), false},
		{leaf("source", "neq", "TEST"), true},
		{leaf("source", "neq", "NASDAQ"), false},
		{leaf("missing", "neq", "x"), true},
		{leaf("category", "in", "", "tech", "finance"), true},
		{leaf("category", "in", "", "finance"), false},
		{leaf("missing", "in", "", "a"), false},
		{leaf("ticker", "nin", "", "MSFT", "GOOGL"), true},
		{leaf("ticker", "nin", "", "AAPL"), false},
		{leaf("missing", "nin", "", "a"), true},
		{leaf("price", "ex", ""), true},
		{leaf("internal_id", "ex", ""), false},
		{leaf("internal_id", "nex", ""), true},
		{leaf("price", "nex", ""), false},
		{leaf("ticker", "sw", "AA"), true},
		{leaf("ticker", "sw", "PL"), false},
		{leaf("source", "ew", "DAQ"), true},
		{leaf("source", "ew", "NAS"), false},
		{leaf("category", "ct", "ec"), true},
		{leaf("category", "ct", "xx"), false},
		{leaf("missing", "sw", "x"), false},
		{leaf("price", "gt", "100"), true},
		{leaf("price", "gt", "150.25"), false},
		{leaf("price", "gt", "150.2"), true},
		{leaf("price", "gt", "150.250001"), false},
		{leaf("volume", "gte", "1000"), true},
		{leaf("volume", "gte", "1000.0001"), false},
		{leaf("price", "lt", "200"), true},
		{leaf("price", "lt", "99.99"), false},
		{leaf("volume", "lte", "1000"), true},
		{leaf("volume", "lte", "999"), false},
		{leaf("neg", "lt", "-3"), true},
		{leaf("neg", "gt", "-4"), true},
		{leaf("neg", "gt", "0"), false},
		{leaf("volume", "gt", "00999.000"), true},
		{leaf("ticker", "gt", "1"), false},  // not a number: no match
		{leaf("missing", "lt", "1"), false}, // absent: no match
		{leaf("price", "gt", "abc"), false}, // filter value not a number
		{branch("and", leaf("ticker", "eq", "AAPL"), leaf("category", "eq", "tech")), true},
		{branch("and", leaf("ticker", "eq", "AAPL"), leaf("category", "eq", "x")), false},
		{branch("or", leaf("ticker", "eq", "MSFT"), leaf("category", "eq", "tech")), true},
		{branch("or", leaf("ticker", "eq", "MSFT"), leaf("category", "eq", "x")), false},
		{branch("not", leaf("source", "eq", "NYSE")), true},
		{branch("not", leaf("source", "eq", "NASDAQ")), false},
		{branch("and", branch("or", leaf("a", "ex", ""), leaf("ticker", "sw", "A")), branch("not", leaf("price", "lt", "100"))), true},
	}
	for _, c := range cases {
		f, why := Compile(c.f)
		if f == nil {
			t.Fatalf("%v refused: %s", c.f, why)
		}
		if got := f.Match(tags); got != c.want {
			t.Errorf("%v: match %v, want %v", c.f, got, c.want)
		}
	}
}

func TestTagsFilterRefused(t *testing.T) {
	t.Parallel()
	deep := leaf("k", "eq", "v")
	for i := 0; i < maxFilterDepth; i++ {
		deep = branch("not", deep)
	}
	wide := branch("or")
	for i := 0; i < maxFilterNodes; i++ {
		wide.Nodes = append(wide.Nodes, leaf("k", "eq", "v"))
	}
	many := make([]string, maxFilterValues+1)
	for i := range many {
		many[i] = "v"
	}
	long := strings.Repeat("x", maxFilterValueLen+1)
	for name, f := range map[string]*protocol.FilterNode{
		"unknown cmp":       leaf("k", "regex", "v"),
		"unknown op":        branch("xor", leaf("k", "eq", "v")),
		"no cmp":            leaf("k", "", "v"),
		"no key":            leaf("", "eq", "v"),
		"eq without val":    leaf("k", "eq", ""),
		"eq with vals":      leaf("k", "eq", "v", "w"),
		"in without vals":   leaf("k", "in", ""),
		"in with val":       leaf("k", "in", "v", "w"),
		"ex with val":       leaf("k", "ex", "v"),
		"and empty":         branch("and"),
		"not two":           branch("not", leaf("k", "ex", ""), leaf("k", "ex", "")),
		"nil child":         branch("and", nil),
		"branch with key":   {Op: "and", Key: "k", Nodes: []*protocol.FilterNode{leaf("k", "ex", "")}},
		"leaf with nodes":   {Key: "k", Cmp: "eq", Val: "v", Nodes: []*protocol.FilterNode{leaf("k", "ex", "")}},
		"too deep":          deep,
		"too many nodes":    wide,
		"too many values":   leaf("k", "in", "", many...),
		"value too long":    leaf("k", "eq", long),
		"key too long":      leaf(long, "eq", "v"),
		"in value too long": leaf("k", "in", "", long),
	} {
		if f, _ := Compile(f); f != nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// At the bounds: accepted.
	ok := leaf("k", "eq", "v")
	for i := 1; i < maxFilterDepth; i++ {
		ok = branch("not", ok)
	}
	if f, why := Compile(ok); f == nil {
		t.Fatalf("depth %d refused: %s", maxFilterDepth, why)
	}
}

// TestTagsFilterCanonical checks that filters that mean the same in the
// same order share a canonical form (and so one evaluation), in/nin in any
// order, and that different filters never do.
func TestTagsFilterCanonical(t *testing.T) {
	t.Parallel()
	c := func(f *protocol.FilterNode) string {
		tf, why := Compile(f)
		if tf == nil {
			t.Fatal(why)
		}
		return tf.canonical
	}
	if c(leaf("k", "in", "", "a", "b", "a")) != c(leaf("k", "in", "", "b", "a")) {
		t.Error("in lists in another order differ")
	}
	distinct := []*protocol.FilterNode{
		leaf("k", "eq", "v"), leaf("k", "neq", "v"), leaf("kv", "eq", ""+"x"), leaf("k", "eq", "v:"),
		leaf("k:", "eq", "v"), branch("not", leaf("k", "eq", "v")), branch("and", leaf("k", "eq", "v")),
		branch("and", leaf("k", "eq", "v"), leaf("k", "eq", "v")), leaf("k", "in", "", "a,b"), leaf("k", "in", "", "a", "b"),
	}
	seen := map[string]int{}
	for i, f := range distinct {
		if j, dup := seen[c(f)]; dup {
			t.Errorf("filters %d and %d share a canonical form", j, i)
		}
		seen[c(f)] = i
	}
}

func TestParseDecimal(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "-", ".", "5.", "1e5", "0x10", "1.2.3", " 1", "1 ", "--1", "NaN"} {
		if _, ok := parseDecimal(s); ok {
			t.Errorf("%q parsed", s)
		}
	}
	for _, c := range []struct {
		a, b string
		want int
	}{{"1", "1.0", 0}, {"-0", "0", 0}, {"+2", "2", 0}, {".5", "0.50", 0}, {"10", "9.99", 1}, {"-10", "-9", -1}, {"0.001", "0.01", -1}, {"123456789012345678901234567890", "123456789012345678901234567891", -1}} {
		x, _ := parseDecimal(c.a)
		y, _ := parseDecimal(c.b)
		if got := compareDecimal(x, y); got != c.want {
			t.Errorf("compare(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestTagsFilterLongNumbers: a long numeric tag value, read once per
// publication (Memo), compares the same in every filter and through
// Match, and a long value that is not a number matches none.
func TestTagsFilterLongNumbers(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("7", 100)
	tags := map[string]string{"n": long, "bad": long + "x"}
	cases := []struct {
		f    *protocol.FilterNode
		want bool
	}{
		{leaf("n", "gt", "7"), true},
		{leaf("n", "lt", "7"), false},
		{leaf("n", "gte", long), true},
		{leaf("n", "lte", long+".0"), true},
		{leaf("n", "lt", long+".01"), true},
		{leaf("n", "gt", "1"+long), false},
		{leaf("bad", "gt", "1"), false},
		{leaf("bad", "lt", "1"+long), false},
		{leaf("n", "gt", "x"), false},
	}
	var m Memo
	for _, tc := range cases {
		f, why := Compile(tc.f)
		if why != "" {
			t.Fatalf("%+v: %s", tc.f, why)
		}
		if got := m.Passes(f, tags); got != tc.want {
			t.Errorf("%s %s %s through a Memo: %v, want %v", tc.f.Key, tc.f.Cmp, tc.f.Val, got, tc.want)
		}
		if got := f.Match(tags); got != tc.want {
			t.Errorf("%s %s %s: %v, want %v", tc.f.Key, tc.f.Cmp, tc.f.Val, got, tc.want)
		}
	}
}
