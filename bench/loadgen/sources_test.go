package loadgen

import (
	"slices"
	"testing"
)

func TestParseSources(t *testing.T) {
	got, err := ParseSources("127.0.0.1-127.0.0.3, 127.0.1.9")
	if err != nil || !slices.Equal(got, []string{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.1.9"}) {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := ParseSources(""); err != nil || len(got) != 0 {
		t.Errorf("empty: %v %v", got, err)
	}
	for _, bad := range []string{"x", "127.0.0.5-127.0.0.1", "::1", "10.0.0.0-10.255.255.255"} {
		if _, err := ParseSources(bad); err == nil {
			t.Errorf("ParseSources(%q) accepted", bad)
		}
	}
}
