package hub

import "testing"

// TestPoolWriters: one writer per CPU, at least two, when a write that
// waits leaves the pool; the 64 of old when writers wait for full sockets
// (ClientConfig.WaitOnBlockedWrites), or one per CPU past 64.
func TestPoolWriters(t *testing.T) {
	for _, tc := range []struct {
		wait  bool
		procs int
		want  int
	}{
		{false, 1, 2},
		{false, 2, 2},
		{false, 16, 16},
		{true, 1, 64},
		{true, 2, 64},
		{true, 128, 128},
	} {
		if got := poolWriters(tc.wait, tc.procs); got != tc.want {
			t.Errorf("poolWriters(wait %v, %d CPUs) = %d, want %d", tc.wait, tc.procs, got, tc.want)
		}
	}
}
