//go:build unix

package main

import (
	"log/slog"
	"syscall"
)

// logFileLimit reports how many connections this process can hold. The Go
// runtime has already raised the soft limit to the hard limit; above that
// only the operator can go, so say so before clients find out.
func logFileLimit(log *slog.Logger) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return
	}
	log.Info("open files limit", "soft", rl.Cur, "hard", rl.Max)
	if rl.Cur < 65536 {
		log.Warn("this process can hold at most about as many connections as its open files limit; raise the hard limit (ulimit -Hn, LimitNOFILE=) or run more nodes", "limit", rl.Cur)
	}
}
