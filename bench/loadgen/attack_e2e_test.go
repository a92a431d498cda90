package loadgen_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/server"
)

// startAttackHerald runs a node with the namespaces bench/attacks.sh
// gives its nodes, small.
func startAttackHerald(t *testing.T) *server.Server {
	t.Helper()
	cfg := heraldConfig(t, `
grpc_api:
  enabled: true
  port: 0
  key: "api-key"
channel:
  without_namespace:
    allow_subscribe_for_client: true
  namespaces:
    - name: ledger
      allow_subscribe_for_client: true
      history_size: 1000
      history_ttl: 1m
      allow_recovery: true
    - name: attack
      allow_subscribe_for_client: true
      allow_history_for_subscriber: true
      history_size: 10
      history_ttl: 1m
      allow_recovery: true
    - name: keys
      subscription_type: map
      map:
        mode: persistent
        allow_publish_for_client: true
        max_keys_per_client: 50
`)
	return startHeraldWith(t, cfg)
}

// TestAttacksAgainstHerald runs every attack small on a node of this
// process: the probes, the history subscriber and the attack's own
// outcome all report, and the history subscriber, disconnected by the
// server API in the middle, recovers what it missed: nothing twice,
// nothing lost.
func TestAttacksAgainstHerald(t *testing.T) {
	noLeaks(t)
	s := startAttackHerald(t)
	api := "http://" + s.Addr() + "/api"
	base := loadgen.AttackConfig{
		URL: wsURL(s), APIURL: api, APIKey: "api-key", GRPCAddr: s.GRPCAPIAddr(), Secret: secret, Format: protocol.TypeJSON,
		ServerPID: os.Getpid(), Duration: 1500 * time.Millisecond,
		ProbeChannel: "probe", ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 5 * time.Second,
		LedgerChannel: "ledger:e2e", LedgerRate: 50, Grace: 5 * time.Second,
		LatencyLimit: time.Minute, RSSGrowthLimit: 1 << 30,
	}
	for _, tc := range []struct {
		kind, channel string
		change        func(*loadgen.AttackConfig)
		outcome       string
	}{
		{loadgen.AttackMapKeys, "keys:flood", func(c *loadgen.AttackConfig) { c.MapValue, c.MapInFlight = 1024, 8 }, ": 50 set, "},
		{loadgen.AttackNoRead, "attack:recent", func(c *loadgen.AttackConfig) {
			c.Clients, c.HistoryPull, c.RcvBuf, c.Prefill, c.PrefillPayload = 5, 10, 4096, 10, 20000
		}, "5 of 5 clients subscribed to attack:recent recovering from offset 0 (its top: 10)"},
		{loadgen.AttackGRPCPartial, "", func(c *loadgen.AttackConfig) { c.GRPCConns, c.GRPCStreams, c.GRPCMessage = 2, 2, 4<<20 },
			"4 streams on 2 connections (0 failed)"},
		{loadgen.AttackHistoryHTTP, "attack:deep", func(c *loadgen.AttackConfig) { c.Concurrency, c.Prefill, c.PrefillPayload = 2, 10, 20000 },
			"answered with the history, 0 refused, 0 failed; largest answer 0.2 MiB"},
		{loadgen.AttackHistoryGRPC, "attack:deep", func(c *loadgen.AttackConfig) { c.Concurrency, c.Prefill, c.PrefillPayload = 2, 10, 20000 },
			"answered with the history, 0 refused, 0 failed; largest answer 0.2 MiB"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			cfg := base
			cfg.Kind, cfg.Channel, cfg.LedgerChannel = tc.kind, tc.channel, "ledger:"+tc.kind
			tc.change(&cfg)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			kicked := make(chan error, 1)
			res, err := loadgen.RunAttack(ctx, cfg, func(s string) {
				if strings.Contains(s, "attacking for") {
					go func() { kicked <- disconnectUser(ctx, api, "ledger") }()
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-kicked; err != nil {
				t.Fatal(err)
			}
			if tc.kind == loadgen.AttackGRPCPartial && !strings.Contains(res.Outcome, "the server ended 4 ") {
				// Herald asks for the API key before it reads a message.
				t.Errorf("outcome %q: want every stream ended by the server", res.Outcome)
			}
			if !strings.Contains(res.Outcome, tc.outcome) || res.AttackErr != "" {
				t.Errorf("outcome %q (error %q), want it to contain %q", res.Outcome, res.AttackErr, tc.outcome)
			}
			if res.Probes < 2 || res.Failed > 0 || res.Connect.Count != int64(res.Probes) || res.Delivery.Count != int64(res.Probes) {
				t.Errorf("probes: %d, %d failed (%s), %d connects, %d deliveries", res.Probes, res.Failed, res.ProbeErr, res.Connect.Count, res.Delivery.Count)
			}
			l := res.Ledger
			if l.Reconnects < 1 || l.Acked < 10 || l.Duplicates != 0 || l.Lost != 0 || l.Received < l.Acked {
				t.Errorf("history subscriber: %+v, want a reconnect and every acknowledged publication once", l)
			}
			// VmHWM may be a little under the sampled peak: the kernel
			// folds its per-thread RSS counters in now and then.
			if res.RSSBefore <= 0 || res.RSSPeak <= 0 || res.HWM <= 0 || res.RSSSamples < 2 {
				t.Errorf("RSS: before %d, peak %d, VmHWM %d, %d samples", res.RSSBefore, res.RSSPeak, res.HWM, res.RSSSamples)
			}
			if res.Verdict != "pass" {
				t.Errorf("verdict %q", res.Verdict)
			}
		})
	}
}

// disconnectUser closes the connections of user through the server API.
func disconnectUser(ctx context.Context, api, user string) error {
	return apiCall(ctx, api, "disconnect", `{"user":"`+user+`"}`)
}

// apiCall runs one server API method with the tests' API key; a reply
// with an error is an error.
func apiCall(ctx context.Context, api, method, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/"+method, bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", "api-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || bytes.Contains(reply, []byte(`"error"`)) {
		return &apiError{resp.StatusCode, string(reply)}
	}
	return nil
}

type apiError struct {
	status int
	body   string
}

func (e *apiError) Error() string { return http.StatusText(e.status) + ": " + e.body }
