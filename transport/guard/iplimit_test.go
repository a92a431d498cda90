package guard

import (
	"net/netip"
	"testing"
)

func TestIPKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9"}, // same /64
		{"::ffff:192.0.2.1", "192.0.2.1"},           // v4-mapped
		{"fe80::1%eth0", "fe80::2%eth1"},            // zones do not split a /64
	} {
		if ipKey(netip.MustParseAddr(tc.a)) != ipKey(netip.MustParseAddr(tc.b)) {
			t.Errorf("%s and %s must share a bucket", tc.a, tc.b)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
		{"192.0.2.1", "192.0.2.2"},
	} {
		if ipKey(netip.MustParseAddr(tc.a)) == ipKey(netip.MustParseAddr(tc.b)) {
			t.Errorf("%s and %s must not share a bucket", tc.a, tc.b)
		}
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
