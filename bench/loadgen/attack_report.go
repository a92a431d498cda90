package loadgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteAttacksMarkdown writes the rows as a Markdown table, then what
// each attack got done and which connections the node closed meanwhile.
func WriteAttacksMarkdown(w io.Writer, rows []AttackResult) error {
	bw := bufio.NewWriter(w)
	if len(rows) > 0 {
		fmt.Fprintf(bw, "Targets: a fresh client's connect, subscribe and delivery within %s ms (max), the node's RSS within +%s MiB of its level before the attack, no history publication twice or lost.\n\n",
			ms(rows[0].LatencyLimit), mib(rows[0].RSSGrowthLimit))
	}
	fmt.Fprintln(bw, "| attack | RSS before → peak MiB (VmHWM) | connect p50 / p99 / max ms | subscribe p50 / p99 / max ms | delivery p50 / p99 / max ms | probes failed | history acked / twice / lost | verdict |")
	fmt.Fprintln(bw, "|---|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		fmt.Fprintf(bw, "| %s | %s → %s (%s) | %s | %s | %s | %d of %d | %d / %d / %d | %s |\n",
			r.Attack, mib(r.RSSBefore), mib(r.RSSPeak), mib(r.HWM), spread(r.Connect), spread(r.Subscribe), spread(r.Delivery),
			r.Failed, r.Probes, r.Ledger.Acked, r.Ledger.Duplicates, r.Ledger.Lost, r.Verdict)
	}
	fmt.Fprintln(bw)
	for _, r := range rows {
		fmt.Fprintf(bw, "- %s: %s", r.Attack, r.Outcome)
		if r.AttackErr != "" {
			fmt.Fprintf(bw, "; attack error: %s", r.AttackErr)
		}
		if r.Closes != "" {
			fmt.Fprintf(bw, "; the node closed (code×count): %s", r.Closes)
		}
		if r.DetachedWrites > 0 {
			fmt.Fprintf(bw, "; writes detached from the node's writers: %d", r.DetachedWrites)
		}
		if r.Ledger.Reconnects > 0 {
			fmt.Fprintf(bw, "; the history subscriber reconnected %d times", r.Ledger.Reconnects)
		}
		if r.ProbeErr != "" {
			fmt.Fprintf(bw, "; first failed probe: %s", r.ProbeErr)
		}
		fmt.Fprintln(bw)
	}
	return bw.Flush()
}

// ReadAttackResults reads the JSON lines `herald-bench attacks --json`
// wrote, in order.
func ReadAttackResults(r io.Reader) ([]AttackResult, error) {
	var rows []AttackResult
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var row AttackResult
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

// spread is p50 / p99 / max in milliseconds.
func spread(p Percentiles) string { return ms(p.P50) + " / " + ms(p.P99) + " / " + ms(p.Max) }
