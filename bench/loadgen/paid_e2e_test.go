package loadgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
)

// TestPaidAgainstHerald: with revoked tokens and blocked users loaded,
// every measured connect succeeds (none of the loaded decisions is its
// own), and get_user_status answers for every user asked.
func TestPaidAgainstHerald(t *testing.T) {
	noLeaks(t)
	cfg := heraldConfig(t, `
websocket:
  ip_rate_limit: -1
`)
	s := startHeraldWith(t, cfg)
	for _, loaded := range []int{0, 50} {
		res, err := loadgen.RunPaid(context.Background(), loadgen.PaidConfig{
			URL: wsURL(s), APIURL: "http://" + s.Addr() + "/api", APIKey: "api-key", Secret: secret,
			Revoked: loaded, Blocked: loaded, Batch: 20,
			Connects: 30, Concurrency: 4, StatusUsers: 20, StatusRounds: 5, Timeout: 10 * time.Second,
		}, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		if res.Connected != 30 || res.Failed != 0 || res.Rate <= 0 || res.Connect.P99 <= 0 ||
			res.Revoked != loaded || res.Blocked != loaded || res.Status.Count != 5 || res.StatusUsers != 20 {
			t.Fatalf("loaded %d: %+v", loaded, res)
		}
	}
}
