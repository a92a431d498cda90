package loadgen

import (
	"fmt"
	"net/netip"
	"strings"
)

// maxSources bounds a source address range.
const maxSources = 1024

// ParseSources reads local source addresses: a comma-separated list of
// IPv4 addresses and ranges ("127.0.0.1-127.0.0.20").
func ParseSources(spec string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := netip.ParseAddr(strings.TrimSpace(lo))
		if err != nil || !a.Is4() {
			return nil, fmt.Errorf("source %q: want an IPv4 address or range A-B", part)
		}
		b := a
		if isRange {
			if b, err = netip.ParseAddr(strings.TrimSpace(hi)); err != nil || !b.Is4() || b.Less(a) {
				return nil, fmt.Errorf("source range %q: want A-B with A <= B", part)
			}
		}
		for x := a; ; x = x.Next() {
			if len(out) == maxSources {
				return nil, fmt.Errorf("sources %q: more than %d addresses", spec, maxSources)
			}
			out = append(out, x.String())
			if x == b {
				break
			}
		}
	}
	return out, nil
}
