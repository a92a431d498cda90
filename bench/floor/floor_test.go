package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testSecret = "floor-secret"

func startFloor(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.Addr, cfg.APIAddr = "127.0.0.1:0", "127.0.0.1:0"
	if cfg.Upgrade == "" {
		cfg.Upgrade = "raw"
	}
	s, err := Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// TestLatencyRigAgainstFloor runs herald-bench's own latency rig
// (connect with a token, subscribe, API publications, the pushes it times)
// against the floor in both formats, both handshakes and 1 or 2 writers:
// every publication reaches every subscriber exactly once.
func TestLatencyRigAgainstFloor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		format  protocol.Type
		upgrade string
		writers int
		batch   int
	}{
		{"json-raw-1", protocol.TypeJSON, "raw", 1, 1},
		{"protobuf-http-2", protocol.TypeProtobuf, "http", 2, 1},
		{"protobuf-raw-2-batch", protocol.TypeProtobuf, "raw", 2, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startFloor(t, Config{Upgrade: tc.upgrade, Writers: tc.writers, Secret: testSecret, APIKey: "k"})
			const subscribers = 12
			rig, err := loadgen.OpenRig(context.Background(), loadgen.LatencyConfig{
				Pool: loadgen.PoolConfig{
					URLs: []string{"ws://" + s.Addr() + "/connection/websocket"}, Format: tc.format, Secret: testSecret,
				},
				Subscribers: subscribers, Workers: 2, Channel: "floor",
				APIURL: "http://" + s.APIAddr() + "/api", APIKey: "k", APIConns: 2, Batch: tc.batch,
				Grace: 300 * time.Millisecond, SetupTimeout: 20 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			sweepEveryCopy(t, rig, subscribers)
			st := s.Stats()
			if st.Connects != subscribers || st.Publications == 0 || st.Writes < st.Publications || st.RefusedToken != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestBareConnsAgainstFloor: herald-bench conns (connect and two
// subscribes in the first frame) is served by the bare mode, with and
// without a token check, and a wrong token is refused.
func TestBareConnsAgainstFloor(t *testing.T) {
	for _, tc := range []struct {
		secret, upgrade string
		format          protocol.Type
	}{
		{"", "raw", protocol.TypeJSON},
		{testSecret, "http", protocol.TypeProtobuf},
	} {
		t.Run(tc.upgrade+"-"+tc.format.String(), func(t *testing.T) {
			secret := tc.secret
			s := startFloor(t, Config{Bare: true, Writers: 1, Secret: secret, Upgrade: tc.upgrade})
			url := "ws://" + s.Addr() + "/connection/websocket"
			res, err := loadgen.RunConns(context.Background(), loadgen.ConnsConfig{
				Pool:        loadgen.PoolConfig{URLs: []string{url}, Format: tc.format, Secret: testSecret, Channels: []string{"a", "b"}},
				Connections: 20, Workers: 2, Hold: 100 * time.Millisecond, Settle: 10 * time.Millisecond,
				Timeout: 20 * time.Second,
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Connected != 20 || res.Held != 20 || res.Failed != 0 || res.Disconnected != 0 {
				t.Fatalf("%+v (errors %v)", res, res.Errors)
			}
			if secret == "" {
				return
			}
			res, err = loadgen.RunConns(context.Background(), loadgen.ConnsConfig{
				Pool:        loadgen.PoolConfig{URLs: []string{url}, Secret: "wrong"},
				Connections: 3, Hold: time.Millisecond, Settle: time.Millisecond, Timeout: 20 * time.Second,
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed != 3 || s.Stats().RefusedToken != 3 {
				t.Fatalf("a wrong token: %+v, stats %+v", res, s.Stats())
			}
		})
	}
}

// sweepEveryCopy runs two short steps (40 and 80 publications a second)
// on rig and checks that every publication reached each of the
// subscribers exactly once; it closes the rig.
func sweepEveryCopy(t *testing.T, rig *loadgen.Rig, subscribers int) {
	t.Helper()
	defer rig.Close()
	steps, _ := loadgen.ParseRates("40,80", 500*time.Millisecond, false)
	res, err := rig.Sweep(context.Background(), steps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || res.Stopped != "" {
		t.Fatalf("steps %d, stopped %q", len(res.Steps), res.Stopped)
	}
	for _, r := range res.Steps {
		want := int64(r.Offered) * int64(subscribers)
		if r.Offered == 0 || r.Accepted != int64(r.Offered) || r.Received != want || r.Missing != 0 || r.Duplicates != 0 {
			t.Errorf("step %v/s: %+v", r.Rate, r)
		}
	}
	if err := rig.Close(); err != nil {
		t.Fatal(err)
	}
}
