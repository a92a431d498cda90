package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLogFileAndPIDFile: log.file takes the log off standard error into
// the file, and pid_file holds the process ID while the node runs and is
// gone after a clean shutdown.
func TestLogFileAndPIDFile(t *testing.T) {
	dir := t.TempDir()
	logPath, pidPath := filepath.Join(dir, "herald.log"), filepath.Join(dir, "herald.pid")
	cfg := writeFile(t, "log:\n  file: "+logPath+"\npid_file: "+pidPath+"\n")
	r := startServe(t, "-c", cfg)
	// The first-run banner still goes to standard error, after Start.
	out := r.waitFor(t, "HMAC secret")
	if strings.Contains(out, "herald listening") {
		t.Errorf("with log.file the log still went to standard error:\n%s", out)
	}
	logged, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(logged), "herald listening") {
		t.Errorf("log.file: %v, %q: want the log", err, logged)
	}
	pid, err := os.ReadFile(pidPath)
	if err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("pid_file: %v, %q: want %d", err, pid, os.Getpid())
	}
	r.stop(t)
	if _, err := os.Stat(pidPath); !os.IsNotExist(err) {
		t.Errorf("pid_file after shutdown: %v, want removed", err)
	}
}
