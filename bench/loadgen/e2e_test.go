package loadgen_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/servertest"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/server"
)

const secret = "bench-secret"

// startHerald runs a Herald node on loopback that lets clients subscribe
// to and publish in channels without a namespace.
func startHerald(t *testing.T) *server.Server {
	t.Helper()
	cfg := config.Default()
	cfg.Address = "127.0.0.1:0"
	cfg.Client.Token.HMACSecretKey = secret
	cfg.HTTPAPI.Key = "api-key"
	cfg.Shutdown.DrainWindow = time.Duration(10 * time.Millisecond)
	ns := &cfg.Channel.WithoutNamespace
	ns.AllowSubscribeForClient = true
	ns.AllowPublishForClient = true
	return startHeraldWith(t, cfg)
}

// startHeraldWith runs a Herald node of cfg, shut down at the test's end.
// heraldConfig is the configuration of a test node: on loopback, with the
// tests' token secret, the API key "api-key" and a short drain window,
// plus extra, more top-level YAML sections of the test's own.
func heraldConfig(t *testing.T, extra string) config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`
address: "127.0.0.1:0"
client:
  token:
    hmac_secret_key: "` + secret + `"
http_api:
  key: "api-key"
shutdown:
  drain_window: 10ms
` + extra))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func startHeraldWith(t *testing.T, cfg config.Config) *server.Server {
	t.Helper()
	return servertest.Start(t, cfg)
}

// noLeaks checks for leaked goroutines after every other cleanup (the
// server's shutdown included) has run.
func noLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

func wsURL(s *server.Server) string { return "ws://" + s.Addr() + server.WebSocketPath }

func TestConnsAgainstHerald(t *testing.T) {
	noLeaks(t)
	s := startHerald(t)
	for _, format := range []protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf} {
		t.Run(format.String(), func(t *testing.T) {
			var statuses []loadgen.Status
			res, err := loadgen.RunConns(context.Background(), loadgen.ConnsConfig{
				Pool: loadgen.PoolConfig{
					URLs: []string{wsURL(s)}, Sources: []string{"127.0.0.1", "127.0.0.2"},
					Format: format, Secret: secret, UserPrefix: "u", Channels: []string{"c0", "c1"},
				},
				Connections: 60, Workers: 2, Hold: time.Second, Settle: time.Second,
				Timeout: 30 * time.Second,
			}, func(st loadgen.Status) { statuses = append(statuses, st) })
			if err != nil {
				t.Fatal(err)
			}
			if res.Peak != 60 || res.Held != 60 || res.Connected != 60 || res.Failed != 0 || res.Disconnected != 0 {
				t.Fatalf("%+v (errors %v)", res, res.Errors)
			}
			if len(statuses) == 0 || statuses[len(statuses)-1].Peak != 60 {
				t.Fatalf("statuses %+v", statuses)
			}
		})
	}
}

func TestConnsCountsRefusals(t *testing.T) {
	s := startHerald(t)
	res, err := loadgen.RunConns(context.Background(), loadgen.ConnsConfig{
		Pool:        loadgen.PoolConfig{URLs: []string{wsURL(s)}, Secret: "wrong-secret"},
		Connections: 5, Hold: time.Millisecond, Settle: time.Millisecond, Timeout: 30 * time.Second,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 5 || res.Connected != 0 || len(res.Errors) == 0 {
		t.Fatalf("%+v", res)
	}
}

func TestLatencySweepAgainstHerald(t *testing.T) {
	noLeaks(t)
	s := startHerald(t)
	for _, tc := range []struct {
		name string
		cfg  func(*loadgen.LatencyConfig)
	}{
		{"api-batch", func(c *loadgen.LatencyConfig) {
			c.APIURL, c.APIKey, c.APIConns, c.Batch = "http://"+s.Addr()+"/api", "api-key", 2, 4
		}},
		{"client-protobuf", func(c *loadgen.LatencyConfig) { c.ClientURL, c.Pool.Format = wsURL(s), protocol.TypeProtobuf }},
	} {
		t.Run(tc.name, func(t *testing.T) { runSweep(t, s, tc.name, tc.cfg) })
	}
}

// TestHeavyClientsAgainstHerald: the heavy client, in both formats,
// counts every copy as the light one does.
func TestHeavyClientsAgainstHerald(t *testing.T) {
	testClientKind(t, loadgen.ClientHeavy)
}

// testClientKind sweeps with subscribers of the client kind, in both
// formats, publishing through the API.
func testClientKind(t *testing.T, client string) {
	noLeaks(t)
	s := startHerald(t)
	for _, format := range []protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf} {
		name := client + "-" + format.String()
		t.Run(name, func(t *testing.T) {
			runSweep(t, s, name, func(c *loadgen.LatencyConfig) {
				c.Pool.Client, c.Pool.Format = client, format
				c.APIURL, c.APIKey, c.APIConns = "http://"+s.Addr()+"/api", "api-key", 2
			})
		})
	}
}

// runSweep sweeps 50 and 100 publications/s up and down to 20
// subscribers of channel "lat-"+name and checks that every copy was
// counted once.
func runSweep(t *testing.T, s *server.Server, name string, set func(*loadgen.LatencyConfig)) {
	t.Helper()
	cfg := loadgen.LatencyConfig{
		Pool:        loadgen.PoolConfig{URLs: []string{wsURL(s)}, Secret: secret, UserPrefix: "sub"},
		Subscribers: 20, Workers: 2, Channel: "lat-" + name,
		Warmup: 300 * time.Millisecond, Grace: 300 * time.Millisecond,
	}
	set(&cfg)
	rig, err := loadgen.OpenRig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rig.Close()
	steps, _ := loadgen.ParseRates("50,100", 700*time.Millisecond, true)
	var seen []int
	res, err := rig.Sweep(context.Background(), steps, func(r loadgen.StepResult) { seen = append(seen, r.Index) })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 3 || res.Stopped != "" || len(seen) != 3 {
		t.Fatalf("steps %d stopped %q seen %v", len(res.Steps), res.Stopped, seen)
	}
	for _, r := range res.Steps {
		want := int64(r.Offered) * 20
		if r.Accepted != int64(r.Offered) || r.Expected != want || r.Received != want || r.Missing != 0 || r.Duplicates != 0 {
			t.Errorf("step %d (%v/s): %+v", r.Index, r.Rate, r)
		}
		if r.All.Count != want || r.First.Count != int64(r.Offered) || r.All.P50 <= 0 || r.First.Max > r.Last.Max {
			t.Errorf("step %d latencies: first %+v all %+v last %+v", r.Index, r.First, r.All, r.Last)
		}
	}
	if !res.Steps[2].Down || res.Steps[0].Index == 0 {
		t.Errorf("warm-up reported or direction lost: %+v", res.Steps)
	}
	if err := rig.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSweepStopsAtP99Limit: a limit every step crosses ends the sweep
// after the step that is running when the first crossing is known.
func TestSweepStopsAtP99Limit(t *testing.T) {
	s := startHerald(t)
	rig, err := loadgen.OpenRig(context.Background(), loadgen.LatencyConfig{
		Pool:        loadgen.PoolConfig{URLs: []string{wsURL(s)}, Secret: secret},
		Subscribers: 5, Channel: "limit", APIURL: "http://" + s.Addr() + "/api", APIKey: "api-key",
		Grace: 100 * time.Millisecond, P99Limit: time.Microsecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rig.Close()
	steps, _ := loadgen.ParseRates("20,40,60,80,100", 400*time.Millisecond, false)
	res, err := rig.Sweep(context.Background(), steps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped == "" || len(res.Steps) == 0 || len(res.Steps) >= len(steps) {
		t.Fatalf("stopped %q after %d steps", res.Stopped, len(res.Steps))
	}
}
