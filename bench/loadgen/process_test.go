package loadgen_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
)

// workerEnv makes the test binary act as a worker process, so that the
// tests run the same re-exec path as `herald-bench`.
const workerEnv = "LOADGEN_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		if err := loadgen.RunWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestConnsInWorkerProcesses(t *testing.T) {
	s := startHerald(t)
	t.Setenv(workerEnv, "1")
	res, err := loadgen.RunConns(context.Background(), loadgen.ConnsConfig{
		Pool:        loadgen.PoolConfig{URLs: []string{wsURL(s)}, Secret: secret, Channels: []string{"p"}},
		Connections: 90, Workers: 3, Rate: 900, Hold: time.Millisecond, Settle: time.Millisecond,
		ServerPIDs: []int{os.Getpid()}, Timeout: time.Minute,
		Launcher: loadgen.ExecLauncher{Path: os.Args[0], Args: []string{"-test.run=^$"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Workers != 3 || res.Peak != 90 || res.Connected != 90 || res.Failed != 0 {
		t.Fatalf("%+v", res)
	}
	if res.ServerRSSBefore <= 0 || res.ServerRSSAtN <= 0 || len(res.PerServer) != 1 {
		t.Errorf("server memory not sampled: %+v", res)
	}
	if res.ClientRSS <= 0 {
		t.Errorf("workers' RSS not reported")
	}
}

// TestPoolCountsServerDisconnects: connections the server closes count as
// disconnected, with the close code as the reason.
func TestPoolCountsServerDisconnects(t *testing.T) {
	noLeaks(t)
	s := startHerald(t)
	pool, err := loadgen.NewPool(loadgen.PoolConfig{URLs: []string{wsURL(s)}, Secret: secret}, loadgen.NewClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for i := range 5 {
		if _, err := pool.Open(context.Background(), i, i); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for pool.Counters().Disconnected < 5 {
		if ctx.Err() != nil {
			t.Fatalf("counters %+v", pool.Counters())
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := pool.Counters()
	if c.Current != 0 || c.Connected != 5 {
		t.Errorf("counters %+v", c)
	}
	errs := pool.Errors()
	if len(errs) == 0 || errs[0].Count != 5 {
		t.Errorf("reasons %+v", errs)
	}
	t.Logf("reasons: %+v", errs)
}
