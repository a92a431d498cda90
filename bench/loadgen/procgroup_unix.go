//go:build unix

package loadgen

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts a worker in a process group of its own: a
// terminal's Ctrl-C reaches the coordinator only, which then stops the
// workers in order.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
