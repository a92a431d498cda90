//go:build !unix

package main

import (
	"fmt"
	"runtime"
)

// execBench cannot replace the process here; say what to run instead.
func execBench(path string, _ []string) error {
	return fmt.Errorf("bench: on %s run %s directly, with the same arguments", runtime.GOOS, path)
}
