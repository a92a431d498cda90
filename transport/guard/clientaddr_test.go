package guard

import (
	"net/http"
	"testing"
)

func TestClientAddr(t *testing.T) {
	trusted, err := ParseTrustedProxies([]string{"10.0.0.0/8", "2001:db8::1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"untrusted peer: header ignored", "192.0.2.7:1234", []string{"198.51.100.1"}, "192.0.2.7"},
		{"trusted peer: the forwarded address", "10.1.2.3:1234", []string{"198.51.100.1"}, "198.51.100.1"},
		{"spoofed entries left of the real one", "10.1.2.3:1234", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1"},
		{"a chain of trusted proxies", "10.1.2.3:1234", []string{"198.51.100.1, 10.9.9.9", "10.8.8.8"}, "198.51.100.1"},
		{"trusted IPv6 peer", "[2001:db8::1]:443", []string{"2001:db8:5::9"}, "2001:db8:5::9"},
		{"no header", "10.1.2.3:1234", nil, "10.1.2.3"},
		{"garbage stops at the last vouched hop", "10.1.2.3:1234", []string{"198.51.100.1, garbage, 10.9.9.9"}, "10.9.9.9"},
		{"mapped IPv4 peer", "[::ffff:10.1.2.3]:1", []string{"198.51.100.1"}, "198.51.100.1"},
	} {
		r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		got, ok := ClientAddr(r, trusted)
		if !ok || got.String() != tc.want {
			t.Errorf("%s: got %v (ok %v), want %s", tc.name, got, ok, tc.want)
		}
	}
	if _, ok := ClientAddr(&http.Request{RemoteAddr: "@unix"}, trusted); ok {
		t.Error("a non-IP RemoteAddr must not yield an address")
	}
	if _, err := ParseTrustedProxies([]string{"10.0.0.0/8", "proxy.local"}); err == nil {
		t.Error("a host name must be refused")
	}
}
