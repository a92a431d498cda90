//go:build !unix

package clusterstate

import "time"

// processCPU has no exact source here; the caller falls back on the Go
// runtime's estimate.
func processCPU() (time.Duration, bool) { return 0, false }
