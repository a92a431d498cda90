package loadgen

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func passingRow() AttackResult {
	p := func(ms float64) Percentiles {
		d := time.Duration(ms * float64(time.Millisecond))
		return Percentiles{Count: 20, P50: d / 2, P99: d, Max: d}
	}
	return AttackResult{
		Attack: "noread", Outcome: "200 of 200 clients asked", Closes: "3008×200",
		RSSBefore: 80 << 20, RSSPeak: 120 << 20, HWM: 121 << 20,
		Connect: p(3), Subscribe: p(2), Delivery: p(4), Probes: 20,
		Ledger:       LedgerCount{Sent: 100, Acked: 100, Received: 100},
		LatencyLimit: 100 * time.Millisecond, RSSGrowthLimit: 256 << 20,
	}
}

func TestAttackVerdict(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*AttackResult)
		want   []string // parts of the verdict; none: pass
	}{
		"within the targets": {change: func(*AttackResult) {}},
		"memory":             {change: func(r *AttackResult) { r.RSSPeak = r.RSSBefore + 300<<20 }, want: []string{"RSS +300.0 MiB over 256.0"}},
		"no memory target":   {change: func(r *AttackResult) { r.RSSPeak, r.RSSGrowthLimit = r.RSSBefore+300<<20, 0 }},
		"slow subscribe and delivery": {change: func(r *AttackResult) {
			r.Subscribe.Max, r.Delivery.Max = 101*time.Millisecond, 4*time.Second
		}, want: []string{"over 100ms: subscribe delivery"}},
		"a limit reached is within it": {change: func(r *AttackResult) { r.Connect.Max = 100 * time.Millisecond }},
		"failed probes":                {change: func(r *AttackResult) { r.Failed = 2 }, want: []string{"2 of 20 probes failed"}},
		"no probe":                     {change: func(r *AttackResult) { r.Probes = 0 }, want: []string{"no probe ran"}},
		"twice and lost":               {change: func(r *AttackResult) { r.Ledger.Duplicates, r.Ledger.Lost = 1, 3 }, want: []string{"1 twice, 3 lost"}},
		"nothing acknowledged":         {change: func(r *AttackResult) { r.Ledger.Acked = 0 }, want: []string{"no history publication acknowledged"}},
		"several": {change: func(r *AttackResult) { r.Ledger.Lost, r.Connect.Max = 1, time.Second },
			want: []string{"FAIL: over 100ms: connect; 0 twice, 1 lost"}},
	} {
		r := passingRow()
		tc.change(&r)
		got := r.judge()
		if len(tc.want) == 0 {
			if got != "pass" {
				t.Errorf("%s: verdict %q, want pass", name, got)
			}
			continue
		}
		if !strings.HasPrefix(got, "FAIL:") {
			t.Errorf("%s: verdict %q, want a failure", name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: verdict %q lacks %q", name, got, w)
			}
		}
	}
}

// TestAttackReportRoundTrip: the JSON line of a run reads back into the
// same table row, so that the script's summary is the runs' own.
func TestAttackReportRoundTrip(t *testing.T) {
	a, b := passingRow(), passingRow()
	b.Attack, b.Outcome, b.Closes = "mapkeys", "92091 keys sent: 1000 set", ""
	b.Ledger.Lost, b.ProbeErr, b.Ledger.Reconnects, b.DetachedWrites = 2, "probe 3: subscribe: timeout", 1, 7
	a.Verdict, b.Verdict = a.judge(), b.judge()
	var lines bytes.Buffer
	for _, r := range []AttackResult{a, b} {
		if err := json.NewEncoder(&lines).Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	lines.WriteString("\n")
	rows, err := ReadAttackResults(&lines)
	if err != nil || len(rows) != 2 {
		t.Fatalf("read %d rows, %v", len(rows), err)
	}
	var out bytes.Buffer
	if err := WriteAttacksMarkdown(&out, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"within 100 ms (max)", "+256.0 MiB",
		"| noread | 80.0 → 120.0 (121.0) | 1.50 / 3.00 / 3.00 | 1.00 / 2.00 / 2.00 | 2.00 / 4.00 / 4.00 | 0 of 20 | 100 / 0 / 0 | pass |",
		"| mapkeys |", "| 100 / 0 / 2 | FAIL: 0 twice, 2 lost |",
		"- noread: 200 of 200 clients asked; the node closed (code×count): 3008×200\n",
		"- mapkeys: 92091 keys sent: 1000 set; writes detached from the node's writers: 7; the history subscriber reconnected 1 times; first failed probe: probe 3: subscribe: timeout\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := ReadAttackResults(strings.NewReader("{\"attack\":1}\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("want an error naming line 1, got %v", err)
	}
}

func TestDisconnectCounts(t *testing.T) {
	metrics := `# HELP herald_client_disconnects_total Connections closed, by disconnect code.
# TYPE herald_client_disconnects_total counter
herald_client_disconnects_total{code="3000"} 15
herald_client_disconnects_total{code="3008"} 2
herald_client_disconnects_total{code="3009"} 7
herald_client_errors_total{code="106"} 4
herald_client_blocked_writes_total 10
`
	after, err := parseDisconnects(strings.NewReader(metrics))
	if err != nil {
		t.Fatal(err)
	}
	if c := after.closes; c["3000"] != 15 || c["3008"] != 2 || c["3009"] != 7 || len(c) != 3 || after.detached != 10 {
		t.Fatalf("parsed %+v", after)
	}
	before := map[string]float64{"3000": 5, "3009": 7}
	if got, want := closesDelta(before, after.closes), "3000×10 3008×2"; got != want {
		t.Errorf("closes %q, want %q", got, want)
	}
	if _, err := parseDisconnects(strings.NewReader(`herald_client_disconnects_total{code="3000"} x` + "\n")); err == nil {
		t.Error("want an error for a value that is not a number")
	}
}

// TestPartialFlowControl: the partial sender opens each message with its
// gRPC prefix declaring the whole size, sends within the connection's and
// the stream's windows, in frames of at most the frame size, and stops one
// byte short.
func TestPartialFlowControl(t *testing.T) {
	const size = 40000
	h := &h2state{connWin: 30000, initWin: 20000, maxFrame: 16384, size: size,
		streamWin: map[uint32]int64{1: 20000}, remaining: map[uint32]int{1: 5 + size - 1}, started: map[uint32]bool{}}
	id, n, prefix := h.next()
	if id != 1 || n != 5 || len(prefix) != 5 || prefix[0] != 0 || binary.BigEndian.Uint32(prefix[1:]) != size {
		t.Fatalf("first send: stream %d, %d bytes, prefix %v", id, n, prefix)
	}
	sent := 5
	for {
		_, n, prefix := h.next()
		if n == 0 {
			break
		}
		if prefix != nil || n > 16384 {
			t.Fatalf("a data send of %d bytes (prefix %v)", n, prefix)
		}
		sent += n
	}
	if sent != 20000 || h.streamWin[1] != 0 || h.connWin != 10000 {
		t.Fatalf("sent %d within the stream's window of 20000 (stream window left %d, connection %d)", sent, h.streamWin[1], h.connWin)
	}
	h.streamWin[1] += 1 << 20
	h.connWin += 1 << 20
	for {
		_, n, _ := h.next()
		if n == 0 {
			break
		}
		sent += n
	}
	if sent != 5+size-1 {
		t.Errorf("sent %d bytes in all, want the prefix and all but the last byte (%d)", sent, 5+size-1)
	}
}
