package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The child half of TestGOMAXPROCSFollowsAQuotaOfOneCPU: it runs inside the
// cgroup, where the runtime sized itself at start.
func TestMaxProcsChild(t *testing.T) {
	if os.Getenv("HERALD_TEST_MAXPROCS_CHILD") != "1" {
		t.Skip("run by TestGOMAXPROCSFollowsAQuotaOfOneCPU")
	}
	followCPUQuota(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	fmt.Printf("gomaxprocs=%d\n", runtime.GOMAXPROCS(0))
}

func TestGOMAXPROCSFollowsAQuotaOfOneCPU(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: Go's floor of 2 does not apply")
	}
	root := "/sys/fs/cgroup/cpu"
	cg := filepath.Join(root, fmt.Sprintf("herald-maxprocs-test-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Skipf("no writable cgroup v1 cpu controller here (%v); CI runs as root with one", err)
	}
	t.Cleanup(func() { _ = os.Remove(cg) })
	for file, v := range map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "100000"} {
		if err := os.WriteFile(filepath.Join(cg, file), []byte(v), 0o644); err != nil {
			t.Fatalf("set %s: %v", file, err)
		}
	}
	child := func(env ...string) string {
		// The shell joins the cgroup and becomes the test binary, so the
		// runtime starts inside the quota.
		cmd := exec.Command("sh", "-c", `echo $$ > "$1/cgroup.procs" && exec "$2" -test.run='^TestMaxProcsChild$' -test.v`, "sh", cg, os.Args[0])
		cmd.Env = append(append(os.Environ(), "HERALD_TEST_MAXPROCS_CHILD=1"), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("child: %v\n%s", err, out.String())
		}
		return out.String()
	}
	if out := child(); !strings.Contains(out, "gomaxprocs=1\n") || !strings.Contains(out, "GOMAXPROCS follows the CPU quota") {
		t.Fatalf("under a 1-CPU quota: want GOMAXPROCS 1 and the log line, got:\n%s", out)
	}
	if out := child("GOMAXPROCS=2"); !strings.Contains(out, "gomaxprocs=2\n") {
		t.Fatalf("GOMAXPROCS=2 in the environment must win, got:\n%s", out)
	}
}
