package loadgen_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/server"
)

// TestPaidAgainstHerald: with revoked tokens and blocked users loaded,
// every measured connect succeeds (none of the loaded decisions is its
// own), and get_user_status answers for every user asked. With the
// rate-limit condition's limits (bench/paid.sh RATE_LIMITS=1) every
// connect succeeds too, and the probe finds them on; on a node without
// them the probe fails.
func TestPaidAgainstHerald(t *testing.T) {
	noLeaks(t)
	plain := heraldConfig(t, `
websocket:
  ip_rate_limit: -1
`)
	limited := plain
	limited.Client.RateLimit = paidRateLimits(t)
	nodes := map[bool]*server.Server{false: startHeraldWith(t, plain), true: startHeraldWith(t, limited)}
	for _, point := range []struct {
		loaded int
		limits bool
	}{{0, false}, {50, false}, {50, true}} {
		s := nodes[point.limits]
		res, err := loadgen.RunPaid(context.Background(), loadgen.PaidConfig{
			URL: wsURL(s), APIURL: "http://" + s.Addr() + "/api", APIKey: "api-key", Secret: secret,
			Revoked: point.loaded, Blocked: point.loaded, Batch: 20,
			Connects: 30, Concurrency: 4, StatusUsers: 20, StatusRounds: 5, Timeout: 10 * time.Second,
			RateLimits: point.limits,
		}, t.Logf)
		if err != nil {
			t.Fatalf("%+v: %v", point, err)
		}
		if res.Connected != 30 || res.Failed != 0 || res.Rate <= 0 || res.Connect.P99 <= 0 || res.RateLimits != point.limits ||
			res.Revoked != point.loaded || res.Blocked != point.loaded || res.Status.Count != 5 || res.StatusUsers != 20 {
			t.Fatalf("%+v: %+v", point, res)
		}
	}
	// The probe tells a node without the limits.
	_, err := loadgen.RunPaid(context.Background(), loadgen.PaidConfig{
		URL: wsURL(nodes[false]), APIURL: "http://" + nodes[false].Addr() + "/api", APIKey: "api-key", Secret: secret,
		Connects: 1, Concurrency: 1, Timeout: 10 * time.Second, RateLimits: true,
	}, t.Logf)
	if err == nil || !strings.Contains(err.Error(), "rate limit probe") {
		t.Fatalf("probe of a node without rate limits: %v", err)
	}
}

// paidRateLimits is loadgen.PaidRateLimitsYAML read as the node's
// configuration reads it, under client:.
func paidRateLimits(t *testing.T) config.RateLimitConfig {
	t.Helper()
	indented := "  " + strings.ReplaceAll(strings.TrimRight(loadgen.PaidRateLimitsYAML, "\n"), "\n", "\n  ")
	cfg, err := config.Parse([]byte("client:\n" + indented + "\n"))
	if err != nil {
		t.Fatalf("PaidRateLimitsYAML: %v", err)
	}
	if !cfg.Client.RateLimit.ClientCommand.Enabled || !cfg.Client.RateLimit.UserCommand.Enabled {
		t.Fatalf("PaidRateLimitsYAML turns a layer off: %+v", cfg.Client.RateLimit)
	}
	return cfg.Client.RateLimit
}
