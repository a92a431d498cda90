//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// execBench replaces this process with herald-bench, so signals, the exit
// status and the process id the bench scripts watch are herald-bench's
// own, with nothing in between.
func execBench(path string, args []string) error {
	argv := append([]string{benchBinary}, args...)
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("bench: run %s: %w", path, err)
	}
	return nil // not reached: Exec does not return on success
}
