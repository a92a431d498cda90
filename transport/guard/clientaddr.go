package guard

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrustedProxies reads a list of trusted proxies, each an IP address
// or a CIDR prefix, for Config.TrustedProxies and ClientAddr.
func ParseTrustedProxies(entries []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(e); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(e)
		if err != nil {
			return nil, fmt.Errorf("%q: want an IP address or a CIDR prefix such as 10.0.0.0/8", e)
		}
		a = a.Unmap().WithZone("")
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// ClientKey is what per-address limits count r against, as text: its
// ClientAddr, an IPv6 address by its /64 (one host usually holds a whole
// /64), or RemoteAddr as it is when that is not an IP address and port.
func ClientKey(r *http.Request, trusted []netip.Prefix) string {
	if addr, ok := ClientAddr(r, trusted); ok {
		return ipKey(addr).String()
	}
	return r.RemoteAddr
}

// ClientAddr is the address a request's connection counts against: the
// TCP peer, or, when the peer is a trusted proxy, the rightmost address
// of X-Forwarded-For that is not a trusted proxy (entries left of it are
// whatever the client chose to send). ok is false when RemoteAddr is not
// an IP address and port.
func ClientAddr(r *http.Request, trusted []netip.Prefix) (addr netip.Addr, ok bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	addr = ap.Addr().Unmap()
	if !isTrusted(addr, trusted) {
		return addr, true
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			// Unreadable: the last address a trusted hop vouched for.
			return addr, true
		}
		addr = hop.Unmap()
		if !isTrusted(addr, trusted) {
			return addr, true
		}
	}
	return addr, true
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	a = a.WithZone("")
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
