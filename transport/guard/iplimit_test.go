package guard

import (
	"net/http"
	"net/http/httptest"
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

// TestAdmissionClientAddr: the address other per-address limits count a
// request against is the admission's key: two addresses of one IPv6 /64
// are one client, IPv4 addresses are themselves.
func TestAdmissionClientAddr(t *testing.T) {
	a, _ := newTestAdmission(t, Config{MaxUnauthenticated: -1}, newHubStub())
	addr := func(remote string) string {
		r := httptest.NewRequest(http.MethodPost, "/emulation", nil)
		r.RemoteAddr = remote
		return a.ClientAddr(r)
	}
	if x, y := addr("[2001:db8:1:2::1]:1000"), addr("[2001:db8:1:2:ffff::9]:2000"); x != y {
		t.Errorf("one /64: %q and %q, want one address", x, y)
	}
	if x, y := addr("[2001:db8:1:2::1]:1000"), addr("[2001:db8:1:3::1]:1000"); x == y {
		t.Errorf("two /64s: both %q", x)
	}
	if got := addr("192.0.2.1:1000"); got != "192.0.2.1" {
		t.Errorf("IPv4: %q, want 192.0.2.1", got)
	}
	// ClientKey is the same without an Admission (the HTTP transports'
	// default), and keeps a RemoteAddr that is not an address and port.
	for remote, want := range map[string]string{"[2001:db8:1:2::1]:1000": addr("[2001:db8:1:2::1]:1000"), "192.0.2.1:1000": "192.0.2.1", "pipe": "pipe"} {
		r := httptest.NewRequest(http.MethodPost, "/emulation", nil)
		r.RemoteAddr = remote
		if got := ClientKey(r, nil); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", remote, got, want)
		}
	}
}
