//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris

package testenv

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// tryLockFile takes an exclusive flock(2) on f without waiting; it reports
// false when another holder has it.
func tryLockFile(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK) || errors.Is(err, unix.EINTR):
		return false, nil
	}
	return false, fmt.Errorf("flock: %w", err)
}

func unlockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
