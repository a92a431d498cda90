package main

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
)

// The report names each close the server sent with what tells a starved
// reader from a window that stayed shut.
func TestOverloadReportNamesCloses(t *testing.T) {
	var b strings.Builder
	writeOverloadReport(&b, overloadReport{
		Capacity: 600, RecoveredIn: time.Second, Disconnected: 1,
		Overload: loadgen.StepResult{Rate: 1200, ReaderTurn: 610 * time.Millisecond, ReaderUnread: 2400 * time.Millisecond},
		Closes: []loadgen.ServerClose{{Worker: 1, Sub: 17, Code: 3008, Reason: "slow", RcvBuf: 6 << 20,
			Unread: 2400 * time.Millisecond, Turn: 610 * time.Millisecond}},
	})
	closed := "| closed by the server | worker 1, subscriber 17: 3008 slow; its receive buffer 6.00 MiB; " +
		"left unread with bytes waiting at most 2.4s; its reader's longest turn 610ms |\n"
	readers := "| load tool's readers | longest turn 610ms; longest a subscriber waited unread with bytes in its socket 2.4s |\n"
	for _, want := range []string{closed, readers} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("report:\n%s\nwant the line\n%s", b.String(), want)
		}
	}
}
