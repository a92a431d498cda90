package guard

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"

	"github.com/heraldhq/herald/internal/optionerr"
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

// Validate reports the fields that have no meaning, joined, each a
// *hub.OptionError naming the Go field (so that a configuration layer can
// name its own keys instead). New refuses such a Config with the same
// errors. A missing Pending is New's to report: it is not a setting.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &optionerr.Error{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if m := c.MaxUnauthenticated; m < -1 {
		bad("MaxUnauthenticated", "%d: want a positive number, 0 for the default or -1 for no bound", m)
	}
	if r := c.Rate; math.IsNaN(r) || math.IsInf(r, 0) || r < 0 && r != -1 {
		bad("Rate", "%v: want connections per second, 0 for the default or -1 for no per-address limit", r)
	}
	// Burst and the share are checked even when Rate -1 turns them off, so
	// that a wrong value is reported rather than ignored.
	if b := c.Burst; b < 0 {
		bad("Burst", "%d: want a positive number or 0 for twice Rate", b)
	}
	if m := c.MaxUnauthenticatedPerAddress; m < -1 {
		bad("MaxUnauthenticatedPerAddress", "%d: want a positive number, 0 for the default or -1 for no bound", m)
	}
	return errors.Join(errs...)
}

// resolve checks the values and applies the defaults.
func (c Config) resolve() (limits, error) {
	var l limits
	if err := c.Validate(); err != nil {
		return l, err
	}
	if c.MaxUnauthenticated == 0 {
		l.maxPending = DefaultMaxUnauthenticated
	} else if c.MaxUnauthenticated > 0 {
		l.maxPending = c.MaxUnauthenticated
	}
	switch r := c.Rate; {
	case r == -1:
		// No per-address limit of either kind.
		return l, nil
	case r == 0:
		l.rate = DefaultRate
	default:
		l.rate = r
	}
	if c.Burst == 0 {
		l.burst = max(1, int(math.Ceil(2*l.rate)))
	} else {
		l.burst = c.Burst
	}
	switch m := c.MaxUnauthenticatedPerAddress; {
	case m == 0:
		if l.maxPending > 0 {
			l.maxPerAddress = max(1, int(math.Ceil(DefaultAddressShare*float64(l.maxPending))))
		}
	case m > 0:
		l.maxPerAddress = m
	}
	return l, nil
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
