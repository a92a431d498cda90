package guard

import (
	"net/netip"
	"sync"
)

// Ticket is one connection's place in its address's count of
// unauthenticated connections. Release gives it back; it is called once,
// by the hub (hub.ConnInfo.Admission) when the connection authenticates
// or closes, or by the Admission when the request never reached the hub.
type Ticket interface{ Release() }

// addrCounts counts the unauthenticated connections of each client
// address (by ipKey). An address is in the map only while it holds some,
// so the map never has more entries than there are such connections.
type addrCounts struct {
	max int

	mu     sync.Mutex
	byAddr map[netip.Addr]*addrCount
}

// AddrCounter bounds the connections of each client address (an IPv6
// one by its /64, as ipKey keys it) for a listener outside this package:
// the gRPC API's, which counts every connection where the admission
// counts unauthenticated ones. Its zero value is not usable.
type AddrCounter struct{ counts *addrCounts }

// NewAddrCounter returns a counter that lets each address hold max
// connections.
func NewAddrCounter(max int) AddrCounter { return AddrCounter{newAddrCounts(max)} }

// Take counts one more connection for addr and returns its Ticket, to be
// released when the connection closes; false when addr holds max already.
func (a AddrCounter) Take(addr netip.Addr) (Ticket, bool) {
	e, ok := a.counts.take(addr)
	if !ok {
		return nil, false
	}
	return e, true
}

// addrCount is one address's count. All of the address's connections
// share it as their Ticket, so a connection costs the hub one interface
// value and no allocation of its own.
type addrCount struct {
	counts *addrCounts
	key    netip.Addr
	n      int // guarded by counts.mu
}

func newAddrCounts(max int) *addrCounts {
	return &addrCounts{max: max, byAddr: make(map[netip.Addr]*addrCount)}
}

// take counts one more connection for addr, or reports false when addr
// holds its share already.
func (c *addrCounts) take(addr netip.Addr) (*addrCount, bool) {
	key := ipKey(addr)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byAddr[key]
	if e == nil {
		e = &addrCount{counts: c, key: key}
		c.byAddr[key] = e
	}
	if e.n >= c.max {
		return nil, false
	}
	e.n++
	return e, true
}

// Release gives back one connection of the address.
func (e *addrCount) Release() {
	c := e.counts
	c.mu.Lock()
	defer c.mu.Unlock()
	e.n--
	if e.n <= 0 {
		delete(c.byAddr, e.key)
	}
}

// held is how many unauthenticated connections addr holds.
func (c *addrCounts) held(addr netip.Addr) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.byAddr[ipKey(addr)]; e != nil {
		return e.n
	}
	return 0
}

// size is the number of addresses holding connections.
func (c *addrCounts) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byAddr)
}
