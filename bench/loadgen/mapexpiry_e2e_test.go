package loadgen_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/protocol"
)

// TestMapExpiryAgainstHerald: 3,000 keys of a map namespace with a
// key_ttl of a second, set in batches, are all removed at a live
// subscriber, each within 5 s of its expiry (the memory engine removes
// them within about 100 ms; the bound is for a busy shared CI machine,
// herald-bench map-expiry measures at full scale).
func TestMapExpiryAgainstHerald(t *testing.T) {
	noLeaks(t)
	cfg := heraldConfig(t, `
channel:
  namespaces:
    - name: maps
      subscription_type: map
      allow_subscribe_for_client: true
      map:
        mode: ephemeral
        key_ttl: 1s
        max_page_size: 100
`)
	s := startHeraldWith(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := loadgen.RunMapExpiry(ctx, loadgen.MapExpiryConfig{
		URL: wsURL(s), Format: protocol.TypeProtobuf, Secret: secret, APIURL: "http://" + s.Addr() + "/api", APIKey: "api-key",
		Channel: "maps:expiry", Keys: 3000, KeyTTL: time.Second, Payload: 64, Batch: 250, FillConc: 4, PageSize: 100,
		Wait: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.Removed != 3000 || res.Missing != 0 || res.Lag.Count != 3000 || res.LagMin.Count != 3000 {
		t.Fatalf("%d removals received, %d missing, %d and %d timed; want 3000, 0, 3000, 3000", res.Removed, res.Missing, res.Lag.Count, res.LagMin.Count)
	}
	if res.LagMin.Max > res.Lag.Max {
		t.Fatalf("lag at least %s, at most %s", res.LagMin.Max, res.Lag.Max)
	}
	if res.Lag.Max > 5*time.Second {
		t.Fatalf("the last removal came %s after its key's expiry, want at most 5s", res.Lag.Max)
	}
	var out bytes.Buffer
	if err := loadgen.WriteMapExpiryMarkdown(&out, res); err != nil || !strings.Contains(out.String(), "| 3000 | 1s |") {
		t.Fatalf("markdown %q, %v", out.String(), err)
	}
}
