package guard

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
)

// Defaults of Config's zero fields. docs/operations.md (connection
// admission) says why these values.
const (
	DefaultMaxUnauthenticated = 10000
	DefaultRate               = 1000.0
	// DefaultAddressShare is the fraction of MaxUnauthenticated one client
	// address may hold when MaxUnauthenticatedPerAddress is zero: ten
	// addresses are needed to fill the node's bound, while a network
	// address translator with many legitimate clients, whose connections
	// authenticate within milliseconds, stays far below it.
	DefaultAddressShare = 0.1
)

// Config tunes an Admission. The zero value gives the defaults; -1 turns a
// bound off.
type Config struct {
	// MaxUnauthenticated bounds the connections that have not
	// authenticated yet: those Pending counts, plus the requests between
	// the check and the hub's count. Over it, new connections are refused
	// with 503. 0: DefaultMaxUnauthenticated; -1: no bound.
	MaxUnauthenticated int
	// MaxUnauthenticatedPerAddress bounds one client address's share of
	// them, so that one address cannot fill MaxUnauthenticated on its own
	// and lock everyone else out until its connections time out. Over it,
	// that address is refused with 429. A connection counts from its
	// check until the hub releases its Ticket (it authenticated or
	// closed). 0: DefaultAddressShare of MaxUnauthenticated (at least 1);
	// -1: no bound. Off whenever Rate is -1, as per-address limits are.
	MaxUnauthenticatedPerAddress int
	// Rate is how many new connections per second one client address may
	// open; over it, 429. 0: DefaultRate; -1: no per-address limit at all
	// (neither Rate nor MaxUnauthenticatedPerAddress), for clients that
	// all come through one address that is not a trusted proxy, such as
	// load generators.
	Rate float64
	// Burst is how many connections one address may open at once before
	// Rate applies. 0: twice Rate, at least 1.
	Burst int
	// TrustedProxies are the peers whose X-Forwarded-For is believed when
	// telling a client's address (see ClientAddr and ParseTrustedProxies).
	TrustedProxies []netip.Prefix
	// Pending reports how many connections the hub holds that have not
	// authenticated yet (hub.Hub.NumPending). Required unless
	// MaxUnauthenticated is -1.
	Pending func() int
	// Names name the settings in the warnings logged when connections are
	// refused, such as the configuration keys an operator changes. Each
	// empty name is the Config field's.
	Names Names
	// Logger receives the refusal warnings, at most one a minute per
	// reason. Nil means slog.Default().
	Logger *slog.Logger
}

// Names are the names of Config's limits as an operator knows them.
type Names struct {
	MaxUnauthenticated, MaxUnauthenticatedPerAddress, Rate string
}

// limits are a Config's bounds resolved: 0 is no bound.
type limits struct {
	maxPending, maxPerAddress int
	rate                      float64
	burst                     int
}

// resolve applies the defaults and checks the values.
func (c Config) resolve() (limits, error) {
	var l limits
	var errs []error
	switch m := c.MaxUnauthenticated; {
	case m == 0:
		l.maxPending = DefaultMaxUnauthenticated
	case m == -1:
	case m < -1:
		errs = append(errs, fmt.Errorf("MaxUnauthenticated %d: want a positive number, 0 for the default or -1 for no bound", m))
	default:
		l.maxPending = m
	}
	switch r := c.Rate; {
	case math.IsNaN(r) || math.IsInf(r, 0) || r < 0 && r != -1:
		errs = append(errs, fmt.Errorf("Rate %v: want connections per second, 0 for the default or -1 for no per-address limit", r))
	case r == -1:
		// No per-address limit of either kind.
		return l, errors.Join(errs...)
	case r == 0:
		l.rate = DefaultRate
	default:
		l.rate = r
	}
	switch b := c.Burst; {
	case b < 0:
		errs = append(errs, fmt.Errorf("Burst %d: want a positive number or 0 for twice Rate", b))
	case b == 0:
		l.burst = max(1, int(math.Ceil(2*l.rate)))
	default:
		l.burst = b
	}
	switch m := c.MaxUnauthenticatedPerAddress; {
	case m == 0:
		if l.maxPending > 0 {
			l.maxPerAddress = max(1, int(math.Ceil(DefaultAddressShare*float64(l.maxPending))))
		}
	case m == -1:
	case m < -1:
		errs = append(errs, fmt.Errorf("MaxUnauthenticatedPerAddress %d: want a positive number, 0 for the default or -1 for no bound", m))
	default:
		l.maxPerAddress = m
	}
	return l, errors.Join(errs...)
}

func (n Names) withDefaults() Names {
	if n.MaxUnauthenticated == "" {
		n.MaxUnauthenticated = "MaxUnauthenticated"
	}
	if n.MaxUnauthenticatedPerAddress == "" {
		n.MaxUnauthenticatedPerAddress = "MaxUnauthenticatedPerAddress"
	}
	if n.Rate == "" {
		n.Rate = "Rate"
	}
	return n
}
