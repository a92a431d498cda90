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
// bound off. It is also the file format's admission keys of the websocket
// section (package config decodes it from the yaml tags, which hold each
// key's default and doc line); the fields tagged "-" are set by the
// program.
type Config struct {
	// MaxUnauthenticated bounds the connections that have not
	// authenticated yet: those Pending counts, plus the requests between
	// the check and the hub's count. Over it, new connections are refused
	// with 503. 0: DefaultMaxUnauthenticated; -1: no bound.
	MaxUnauthenticated int `yaml:"max_unauthenticated" default:"10000" doc:"most connections this node holds that have not authenticated yet (upgraded, no successful 'connect'). Over it, new upgrade requests are answered '503' before the upgrade and the TCP connection is closed. '-1': no bound; '0': the default"`
	// MaxUnauthenticatedPerAddress bounds one client address's share of
	// them, so that one address cannot fill MaxUnauthenticated on its own
	// and lock everyone else out until its connections time out. Over it,
	// that address is refused with 429. A connection counts from its
	// check until the hub releases its Ticket (it authenticated or
	// closed). 0: DefaultAddressShare of MaxUnauthenticated (at least 1);
	// -1: no bound. Off whenever Rate is -1, as per-address limits are.
	MaxUnauthenticatedPerAddress int `yaml:"max_unauthenticated_per_address" default:"0" defaultdoc:"a tenth of 'max_unauthenticated'" doc:"most of those connections one client address may hold, so that one address cannot fill 'max_unauthenticated' and lock everyone else out; over it, that address is answered '429'. '0': a tenth of 'max_unauthenticated' (at least 1); '-1': no bound (also off when 'ip_rate_limit' is '-1')"`
	// Rate is how many new connections per second one client address may
	// open; over it, 429. 0: DefaultRate; -1: no per-address limit at all
	// (neither Rate nor MaxUnauthenticatedPerAddress), for clients that
	// all come through one address that is not a trusted proxy, such as
	// load generators.
	Rate float64 `yaml:"ip_rate_limit" default:"1000" doc:"new connections per second one client address may open (an IPv6 address counts by its '/64'). Over it, upgrade requests are answered '429' before the upgrade. The address is the TCP peer's unless the peer is in 'websocket.trusted_proxies'. '-1': no limit (behind a proxy that hides client addresses, load tests); '0': the default"`
	// Burst is how many connections one address may open at once before
	// Rate applies. 0: twice Rate, at least 1.
	Burst int `yaml:"ip_rate_burst" defaultdoc:"twice 'ip_rate_limit'" doc:"connections one address may open at once before 'ip_rate_limit' applies (0: twice 'ip_rate_limit')"`
	// TrustedProxies are the peers whose X-Forwarded-For is believed when
	// telling a client's address (see ClientAddr), each an IP address or a
	// CIDR prefix, as ParseTrustedProxies reads them; New parses them once
	// (Admission.ClientAddr uses them).
	TrustedProxies []string `yaml:"trusted_proxies" doc:"addresses or CIDR prefixes (e.g. '10.0.0.0/8') of reverse proxies in front of the node. A connection from one counts against the rightmost 'X-Forwarded-For' address that is not itself a trusted proxy; from anywhere else 'X-Forwarded-For' is ignored, since a client can send any value"`
	// Pending reports how many connections the hub holds that have not
	// authenticated yet (hub.Hub.NumPending). Required unless
	// MaxUnauthenticated is -1.
	Pending func() int `yaml:"-"`
	// Names name the settings in the warnings logged when connections are
	// refused, such as the configuration keys an operator changes. Each
	// empty name is the Config field's.
	Names Names `yaml:"-"`
	// Logger receives the refusal warnings, at most one a minute per
	// reason. Nil means slog.Default().
	Logger *slog.Logger `yaml:"-"`
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
	trusted                   []netip.Prefix
}

// Validate reports the fields that have no meaning, joined, each a
// *hub.OptionError naming the Go field (so that a configuration layer can
// name its own keys instead). New refuses such a Config with the same
// errors. A missing Pending is New's to report: it is not a setting.
func (c Config) Validate() error {
	var errs optionerr.List
	bad := errs.Add
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
	for i, e := range c.TrustedProxies {
		if _, err := ParseTrustedProxies([]string{e}); err != nil {
			bad(fmt.Sprintf("TrustedProxies[%d]", i), "%v", err)
		}
	}
	return errors.Join(errs...)
}

// resolve checks the values and applies the defaults.
func (c Config) resolve() (limits, error) {
	var l limits
	if err := c.Validate(); err != nil {
		return l, err
	}
	// Validate has read every entry: this cannot fail.
	trusted, err := ParseTrustedProxies(c.TrustedProxies)
	if err != nil {
		return l, err
	}
	l.trusted = trusted
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
