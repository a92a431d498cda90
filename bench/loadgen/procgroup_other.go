//go:build !unix

package loadgen

import "os/exec"

// ownProcessGroup leaves the worker in the coordinator's group: process
// groups are a Unix notion.
func ownProcessGroup(*exec.Cmd) {}
