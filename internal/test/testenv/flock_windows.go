//go:build windows

package testenv

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// lockRange is the byte the lock covers: far past the holder's name, since
// Windows locks are mandatory and would keep waiting tests from reading it.
func lockRange() *windows.Overlapped { return &windows.Overlapped{OffsetHigh: 1} }

// tryLockFile takes an exclusive LockFileEx lock on f without waiting; it
// reports false when another holder has it.
func tryLockFile(f *os.File) (bool, error) {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, lockRange())
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	}
	return false, fmt.Errorf("LockFileEx: %w", err)
}

func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, lockRange())
}
