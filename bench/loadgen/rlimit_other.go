//go:build !unix

package loadgen

import (
	"fmt"
	"runtime"
)

// Open-files limits (RLIMIT_NOFILE) are a Unix notion; the load tool's
// connection pool needs Linux anyway (see shard_other.go).

// FileLimit returns the open-files limit of this process.
func FileLimit() (soft, hard uint64, err error) {
	return 0, 0, fmt.Errorf("no open-files limit to read on %s", runtime.GOOS)
}

// RaiseFileLimit makes sure this process may hold conns connections.
func RaiseFileLimit(conns int) error {
	return fmt.Errorf("no open-files limit to raise on %s", runtime.GOOS)
}
