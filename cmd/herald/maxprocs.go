package main

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"

	"go.uber.org/automaxprocs/maxprocs"
)

// followCPUQuota makes GOMAXPROCS follow a container's CPU quota below two
// CPUs. Go (1.25 on) follows a quota by itself, but never goes below 2 on a
// machine with two or more CPUs: under a 1-CPU quota two threads spend the
// period's budget in half of it and the node is throttled for the rest,
// which is where a real-time server's p99 goes (docs/benchmarks.md, "Side by
// side with Centrifugo"). Where the quota is 2 or more, or there is none,
// Go's own choice stays, including its updates when the quota changes. An
// explicit GOMAXPROCS in the environment always wins.
func followCPUQuota(log *slog.Logger) {
	if v, ok := os.LookupEnv("GOMAXPROCS"); ok {
		log.Info("GOMAXPROCS set in the environment", "gomaxprocs", v)
		return
	}
	goDefault := runtime.GOMAXPROCS(0)
	// Rounded up as Go rounds a quota, so the only difference from Go's
	// choice is the floor of 2.
	roundUp := maxprocs.RoundQuotaFunc(func(q float64) int { return int(math.Ceil(q)) })
	quiet := maxprocs.Logger(func(string, ...any) {})
	if _, err := maxprocs.Set(roundUp, quiet); err != nil {
		log.Warn("cannot read the CPU quota; GOMAXPROCS left as Go chose it", "gomaxprocs", goDefault, "error", fmt.Sprint(err))
		runtime.SetDefaultGOMAXPROCS()
		return
	}
	if n := runtime.GOMAXPROCS(0); n < goDefault {
		log.Info("GOMAXPROCS follows the CPU quota", "gomaxprocs", n, "go_default", goDefault)
		return
	}
	// maxprocs.Set may have set the same value, which stops Go's own
	// updates; hand the setting back to the runtime.
	runtime.SetDefaultGOMAXPROCS()
}
