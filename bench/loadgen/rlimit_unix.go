//go:build unix

package loadgen

import (
	"fmt"
	"syscall"
)

// FileLimit returns the open-files limit of this process.
func FileLimit() (soft, hard uint64, err error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, fmt.Errorf("getrlimit: %w", err)
	}
	return rl.Cur, rl.Max, nil
}

// RaiseFileLimit makes sure this process may hold conns connections,
// raising the soft open-files limit when needed. When the hard limit is
// too low it says so and what to do, rather than letting dials fail with
// EMFILE later.
func RaiseFileLimit(conns int) error {
	need := uint64(conns) + fdMargin
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	if rl.Cur >= need {
		return nil
	}
	if rl.Max < need {
		return fmt.Errorf("%d connections need %d open files but the hard limit is %d, which only root can raise (ulimit -Hn, LimitNOFILE=): use more worker processes, at most %d connections each", conns, need, rl.Max, rl.Max-min(rl.Max, fdMargin))
	}
	rl.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return fmt.Errorf("raise the open-files soft limit to %d: %w", need, err)
	}
	return nil
}
