//go:build unix

package server

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process has used: a
// benchmark's cost that other processes on the machine do not inflate the
// way they inflate wall time.
func processCPU() time.Duration {
	user, sys := processTimes()
	return user + sys
}

// processUserCPU is the user part of processCPU: the process's own code,
// without the kernel's work (system calls), which varies more from run to
// run.
func processUserCPU() time.Duration {
	user, _ := processTimes()
	return user
}

// processTimes is the process's user and system time so far (0 when the
// kernel does not say).
func processTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
