//go:build !unix

package main

import (
	"testing"
	"time"
)

// cpuTime is not measured where getrusage is missing: cpu-ns/write reads 0.
func cpuTime(*testing.B) time.Duration { return 0 }
