package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/protocol"
)

// The rate-limit condition of herald-bench paid: issue 37 counts a
// connect "with revocation, blocking and rate limits enabled", so the
// node runs with both in-memory command layers on (client_command per
// connection, user_command per user) at limits the measured traffic never
// reaches, and what the connects pay is the checks alone. A probe then
// shows the limits were really on: one rpc method of each layer has a
// bucket of one, which a second call overflows.

// Probe rpc methods: each has a bucket of one call an hour in one layer.
const (
	probeConnectionMethod = "herald-bench-probe-connection"
	probeUserMethod       = "herald-bench-probe-user"
)

// PaidRateLimitsYAML is the node's client.rate_limit for the rate-limit
// condition, as keys of the client section (bench/paid.sh indents it
// there; herald-bench paid --print-rate-limits prints it). Each measured
// client connects once as a user of its own, and sends nothing after
// connect; the API calls are not client commands: so no bucket below but
// the probes' is ever empty. redis_user_command is left off: it is a
// round trip to the engine per command by design, not a check.
const PaidRateLimitsYAML = `rate_limit:
  client_command:
    enabled: true
    total:
      enabled: true
      buckets: [{interval: 1s, rate: 1000}]
    default:
      enabled: true
      buckets: [{interval: 1s, rate: 100}, {interval: 1m, rate: 3000}]
    rpc:
      method_overrides:
        - method: "` + probeConnectionMethod + `"
          enabled: true
          buckets: [{interval: 1h, rate: 1}]
  user_command:
    enabled: true
    total:
      enabled: true
      buckets: [{interval: 1s, rate: 1000}]
    default:
      enabled: true
      buckets: [{interval: 1s, rate: 100}, {interval: 1m, rate: 3000}]
    connect:
      enabled: true
      buckets: [{interval: 1s, rate: 100}, {interval: 1m, rate: 3000}]
    rpc:
      method_overrides:
        - method: "` + probeUserMethod + `"
          enabled: true
          buckets: [{interval: 1h, rate: 1}]
  client_error:
    enabled: true
    total:
      enabled: true
      buckets: [{interval: 1s, rate: 100}]
`

// probeRateLimits connects as a user of its own and calls each probe
// method twice: the second call of each must be refused with error 111,
// by the connection's layer and by the user's.
func probeRateLimits(ctx context.Context, cfg PaidConfig, run string) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	signer, err := auth.NewHMACSigner(cfg.Secret, "HS256")
	if err != nil {
		return fmt.Errorf("rate limit probe: token signer: %w", err)
	}
	now := time.Now()
	token, err := signer.ConnectToken(auth.ConnectClaims{
		User: "pp-" + run, ID: "ppj-" + run, IssuedAt: now, ExpiresAt: now.Add(time.Hour),
	})
	if err != nil {
		return fmt.Errorf("rate limit probe: mint token: %w", err)
	}
	c, err := paidDial(ctx, cfg, token)
	if err != nil {
		return fmt.Errorf("rate limit probe: %w", err)
	}
	defer c.Close()
	id := uint32(1)
	for _, method := range []string{probeConnectionMethod, probeUserMethod} {
		for call := 1; call <= 2; call++ {
			id++
			cmd, _ := json.Marshal(map[string]any{"id": id, "rpc": map[string]string{"method": method}})
			r, err := paidCommand(c, id, cmd)
			if err != nil {
				return fmt.Errorf("rate limit probe: rpc %s: %w", method, err)
			}
			// The first call is not the limits' to refuse (a node
			// without an rpc handler answers 108); the second is.
			refused := r.Error != nil && r.Error.Code == int(protocol.ErrorTooManyRequests)
			if refused != (call == 2) {
				got := "no error"
				if r.Error != nil {
					got = fmt.Sprintf("error %d %s", r.Error.Code, r.Error.Message)
				}
				return fmt.Errorf("rate limit probe: rpc %s, call %d: %s, want error %d on the second call only (is the node's client.rate_limit herald-bench paid --print-rate-limits?)", method, call, got, protocol.ErrorTooManyRequests)
			}
		}
	}
	return nil
}
