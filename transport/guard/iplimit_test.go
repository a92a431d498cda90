package guard

import (
	"net/netip"
	"testing"
	"time"
)

// TestIPLimiterBounded: a flood from many addresses never grows the map
// past its bound, and a forgotten address starts with a full bucket.
func TestIPLimiterBounded(t *testing.T) {
	now := time.Now()
	l := newIPLimiter(0.001, 1, 8)
	a := netip.MustParseAddr("10.0.0.1")
	if !l.allow(a, now) || l.allow(a, now) {
		t.Fatal("burst 1: want the first connection allowed and the second refused")
	}
	for i := range 10000 {
		addr := netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})
		l.allow(addr, now)
		if n := l.size(); n > 8 {
			t.Fatalf("limiter holds %d addresses, bound 8", n)
		}
	}
	if !l.allow(a, now) {
		t.Fatal("an evicted address must start again with a full bucket")
	}
	// Recently seen addresses stay: a busy one is not pushed out by one newcomer.
	busy := netip.MustParseAddr("10.2.0.1")
	l.allow(busy, now)
	l.allow(netip.MustParseAddr("10.2.0.2"), now)
	if l.allow(busy, now) {
		t.Fatal("a recently seen address was forgotten")
	}
}

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
