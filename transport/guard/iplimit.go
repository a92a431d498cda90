package guard

import "net/netip"

// defaultIPLimiterEntries bounds how many addresses the per-address rate
// limiter remembers (keyedlimit.Limiter).
// An entry costs about 200 bytes, so the map stays under ~13 MB however
// many addresses a flood comes from.
const defaultIPLimiterEntries = 65536

// ipKey is the bucket an address counts against: an IPv4 address (also
// when mapped into IPv6) by itself, an IPv6 address by its /64, since one
// host usually holds a whole /64 and could otherwise open each connection
// from a new address.
func ipKey(addr netip.Addr) netip.Addr {
	addr = addr.Unmap()
	if addr.Is6() {
		p, err := addr.Prefix(64)
		if err == nil {
			return p.Addr()
		}
	}
	return addr.WithZone("")
}
