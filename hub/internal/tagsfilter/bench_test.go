package tagsfilter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heraldhq/herald/protocol"
)

// maximalFilter is the most expensive filter a subscriber may give, made
// distinct by i: an or of leaves up to maxFilterNodes, with values as long
// as allowed that never match, so that every leaf is evaluated.
func maximalFilter(i int) *protocol.FilterNode {
	long := func(j int) string {
		return fmt.Sprintf("%d-%d-", i, j) + strings.Repeat("a", maxFilterValueLen-24) + "b"
	}
	cmps := []string{cmpCt, cmpEw, cmpSw, cmpNeq, cmpLt, cmpLte}
	root := &protocol.FilterNode{Op: opOr}
	for j := 0; j < maxFilterNodes-1; j++ {
		c := cmps[j%len(cmps)]
		val := long(j)
		switch c {
		case cmpLt, cmpLte: // less than any tag value longer than it
			val = strings.Repeat("9", maxFilterValueLen-8) + fmt.Sprint(i)
		case cmpNeq:
			c, val = cmpEq, long(j)
		}
		root.Nodes = append(root.Nodes, leaf("k", c, val))
	}
	return root
}

// benchmarkDistinctFilters measures one publication with tags delivered to
// 1,000 subscribers with distinct maximal filters: the cost a hub pays per
// publication on such a channel.
func benchmarkDistinctFilters(b *testing.B, tags map[string]string) {
	var table Table
	filters := make([]*Filter, 1000)
	for i := range filters {
		f, why := Compile(maximalFilter(i))
		if why != "" {
			b.Fatal(why)
		}
		filters[i] = table.Intern(f)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		var m Memo
		for _, f := range filters {
			if m.Passes(f, tags) {
				b.Fatal("a maximal filter matched")
			}
		}
	}
}

// BenchmarkDistinctFiltersLargeTag: one tag value of 65,000 bytes, the
// size the issue was seen with, made of the bytes the filters look for.
func BenchmarkDistinctFiltersLargeTag(b *testing.B) {
	benchmarkDistinctFilters(b, map[string]string{"k": strings.Repeat("a", 65000)})
}

// BenchmarkDistinctFiltersNumericTag: one tag value of 65,000 digits.
func BenchmarkDistinctFiltersNumericTag(b *testing.B) {
	benchmarkDistinctFilters(b, map[string]string{"k": strings.Repeat("5", 65000)})
}

// BenchmarkDistinctFiltersBoundedTag: one tag value of 4,096 bytes, the
// hub's default bound on a publication's tags (hub.DefaultTagsMaxSize).
func BenchmarkDistinctFiltersBoundedTag(b *testing.B) {
	benchmarkDistinctFilters(b, map[string]string{"k": strings.Repeat("a", 4096)})
}

// BenchmarkDistinctFiltersBoundedNumericTag: 4,096 digits.
func BenchmarkDistinctFiltersBoundedNumericTag(b *testing.B) {
	benchmarkDistinctFilters(b, map[string]string{"k": strings.Repeat("5", 4096)})
}
