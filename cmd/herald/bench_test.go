package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFindBench(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "herald")
	onPath := func(string) (string, error) { return "/somewhere/herald-bench", nil }
	notFound := func(name string) (string, error) {
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}

	if got, err := findBench(self, onPath); err != nil || got != "/somewhere/herald-bench" {
		t.Errorf("with herald-bench on PATH only: %q, %v", got, err)
	}
	_, err := findBench(self, notFound)
	if err == nil || !strings.Contains(err.Error(), "go run -C bench ./cmd/herald-bench") ||
		!strings.Contains(err.Error(), filepath.Join(dir, "herald-bench")) {
		t.Errorf("with no herald-bench: want a message on how to get it, got %v", err)
	}

	beside := filepath.Join(dir, "herald-bench")
	if err := os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := findBench(self, onPath); err != nil || got != beside {
		t.Errorf("with herald-bench next to herald: %q, %v (the one beside comes first)", got, err)
	}
}

// TestHeraldBenchRunsHeraldBench builds herald and puts a stand-in
// herald-bench beside it, so the test checks the hand-over without
// building the load tool itself.
func TestHeraldBenchRunsHeraldBench(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for the stand-in herald-bench")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	herald := filepath.Join(dir, "herald")
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", herald, ".").CombinedOutput(); err != nil {
		t.Fatalf("build herald: %v\n%s", err, out)
	}
	stub := "#!/bin/sh\necho \"ran $0 with: $*\"\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "herald-bench"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, herald, "bench", "latency", "--step", "1s", "--help").Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("want herald-bench's exit status 3, got %v", err)
	}
	if got := strings.TrimSpace(string(out)); !strings.HasSuffix(got, "with: latency --step 1s --help") {
		t.Errorf("herald-bench got %q; want the arguments unchanged", got)
	}
}
