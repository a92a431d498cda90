package sharded

import (
	"fmt"
	"testing"
)

// TestShardOfKnown pins ShardOf's answers: they place data, so a change
// to them would strand every sharded cluster's streams. The values were
// checked against the SQL function (TestShardOfMatchesSQL).
func TestShardOfKnown(t *testing.T) {
	for _, c := range []struct {
		ch   string
		n    int
		want int
	}{
		{"chat:index", 1, 0},
		{"chat:index", 0, 0},
		{"chat:index", -3, 0},
		{"chat:index", 2, 1},
		{"chat:index", 3, 2},
		{"chat:index", 10, 9},
		{"news:1", 2, 0},
		{"news:1", 10, 8},
		{"пользователь:42", 4, 1},
		{"", 4, 3},
	} {
		if got := ShardOf(c.ch, c.n); got != c.want {
			t.Errorf("ShardOf(%q, %d) = %d, want %d", c.ch, c.n, got, c.want)
		}
	}
}

// TestShardOfSpreadAndMoves checks the two properties the design relies
// on: channels spread evenly, and growing from n to n+1 shards moves only
// channels to the new shard, about 1/(n+1) of them.
func TestShardOfSpreadAndMoves(t *testing.T) {
	const channels = 20000
	for n := 1; n <= 8; n++ {
		counts := make([]int, n+1)
		moved := 0
		for i := range channels {
			ch := fmt.Sprintf("news:%d", i)
			a, b := ShardOf(ch, n), ShardOf(ch, n+1)
			if a < 0 || a >= n {
				t.Fatalf("ShardOf(%q, %d) = %d, out of range", ch, n, a)
			}
			counts[b]++
			if a != b {
				if b != n {
					t.Fatalf("growing %d -> %d moved %q from shard %d to old shard %d", n, n+1, ch, a, b)
				}
				moved++
			}
		}
		want := channels / (n + 1)
		for s, c := range counts {
			if c < want*9/10 || c > want*11/10 {
				t.Errorf("%d shards: shard %d holds %d of %d channels, want about %d", n+1, s, c, channels, want)
			}
		}
		if moved < want*9/10 || moved > want*11/10 {
			t.Errorf("growing %d -> %d moved %d channels, want about %d", n, n+1, moved, want)
		}
	}
}
