package guard

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/optionerr"
)

// TestConfigResolve: zero fields take the defaults, -1 turns a bound off,
// and the per-address limits go together.
func TestConfigResolve(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want limits
	}{
		{Config{}, limits{maxPending: 10000, maxPerAddress: 1000, rate: 1000, burst: 2000}},
		{Config{MaxUnauthenticated: -1, Rate: -1, Burst: 5}, limits{}},
		{Config{MaxUnauthenticated: 5, Rate: 0.2}, limits{maxPending: 5, maxPerAddress: 1, rate: 0.2, burst: 1}},
		{Config{Rate: 10, Burst: 3}, limits{maxPending: 10000, maxPerAddress: 1000, rate: 10, burst: 3}},
		{Config{MaxUnauthenticated: 25}, limits{maxPending: 25, maxPerAddress: 3, rate: 1000, burst: 2000}},
		{Config{MaxUnauthenticatedPerAddress: 7, MaxUnauthenticated: -1}, limits{maxPerAddress: 7, rate: 1000, burst: 2000}},
		{Config{MaxUnauthenticatedPerAddress: -1}, limits{maxPending: 10000, rate: 1000, burst: 2000}},
		// Rate -1 turns off every per-address limit, the share included.
		{Config{MaxUnauthenticatedPerAddress: 7, Rate: -1}, limits{maxPending: 10000}},
	} {
		got, err := tc.cfg.resolve()
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: got %+v, %v; want %+v", tc.cfg, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{MaxUnauthenticated: -2}, "MaxUnauthenticated"},
		{Config{Rate: -0.5}, "Rate"},
		{Config{Rate: math.NaN()}, "Rate"},
		{Config{Rate: math.Inf(1)}, "Rate"},
		{Config{Burst: -1}, "Burst"},
		{Config{MaxUnauthenticatedPerAddress: -3}, "MaxUnauthenticatedPerAddress"},
		// Rate -1 turns the others off, but a wrong value is still wrong.
		{Config{Rate: -1, Burst: -1}, "Burst"},
		{Config{Rate: -1, MaxUnauthenticatedPerAddress: -2}, "MaxUnauthenticatedPerAddress"},
		{Config{TrustedProxies: []string{"10.0.0.0/8", "proxy.local"}}, "TrustedProxies[1]"},
	} {
		_, err := tc.cfg.resolve()
		if oes := optionerr.All(err); len(oes) != 1 || oes[0].Field != tc.field {
			t.Errorf("%+v: error %v, want one naming %s", tc.cfg, err, tc.field)
		}
		if _, err := New(tc.cfg); err == nil {
			t.Errorf("New(%+v) accepted it", tc.cfg)
		}
	}
	if l, err := (Config{Rate: -1, TrustedProxies: []string{"10.0.0.1", "10.1.0.0/16"}}).resolve(); err != nil ||
		len(l.trusted) != 2 || l.trusted[0].String() != "10.0.0.1/32" || l.trusted[1].String() != "10.1.0.0/16" {
		t.Errorf("trusted proxies: %v, %v; want 10.0.0.1/32 and 10.1.0.0/16", l.trusted, err)
	}
	if _, err := New(Config{}); err == nil || !strings.Contains(err.Error(), "Pending") {
		t.Errorf("New without Pending: %v, want an error naming Pending", err)
	}
	if _, err := New(Config{MaxUnauthenticated: -1}); err != nil {
		t.Errorf("New without a node bound needs no Pending: %v", err)
	}
}
