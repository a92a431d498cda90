package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"
)

// benchBinary is the load tool's executable. It is a separate binary, in a
// module of its own (bench/go.mod), so neither the server nor the modules
// of applications that embed Herald carry the load tool's dependencies.
const benchBinary = "herald-bench"

// benchCommand is `herald bench ...`: it runs herald-bench with the same
// arguments, so the commands of the docs and of older scripts still work.
func benchCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "bench [conns|latency|throughput] [flags]",
		Short: "Run the load and latency tool (the herald-bench binary)",
		Long: `herald bench runs herald-bench, the load and latency tool, with the same arguments.
herald-bench is looked for next to this binary first, then on PATH. It lives in the
bench module of a Herald checkout (bench/go.mod); from the checkout's root, build it with
  go build -C bench -o "$(dirname "$(command -v herald)")/herald-bench" ./cmd/herald-bench
or run it with
  go run -C bench ./cmd/herald-bench conns|latency|throughput [flags]`,
		// Every flag is herald-bench's, --help included.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("bench: find this executable: %w", err)
			}
			path, err := findBench(self, exec.LookPath)
			if err != nil {
				return err
			}
			return execBench(path, args)
		},
	}
}

// findBench returns the herald-bench next to self (the running herald), or
// else the one lookPath finds on PATH.
func findBench(self string, lookPath func(string) (string, error)) (string, error) {
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	name := benchBinary
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	beside := filepath.Join(filepath.Dir(self), name)
	if st, err := os.Stat(beside); err == nil && !st.IsDir() {
		return beside, nil
	}
	path, err := lookPath(benchBinary)
	if err == nil {
		return path, nil
	}
	if errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("bench: the load tool is a separate binary, %s, and there is none next to %s or on PATH: "+
			"from the root of a Herald checkout, build it with `go build -C bench -o %s ./cmd/herald-bench` "+
			"or run `go run -C bench ./cmd/herald-bench ...`",
			benchBinary, self, beside)
	}
	return "", fmt.Errorf("bench: look for %s on PATH: %w", benchBinary, err)
}
