package loadgen

import (
	"fmt"
	"io"
	"time"
)

// WriteMapsMarkdown writes one row per map size and update step: fill,
// snapshot and update latency (first copy, from the intended send time).
// A size whose updates did not run gets one row with the step's columns
// empty.
func WriteMapsMarkdown(w io.Writer, results []MapsResult) error {
	if _, err := fmt.Fprintln(w, "| keys | fill s | fill keys/s | RSS before MiB | RSS filled MiB | store Δ MiB | snapshot + live s | state pages | stream pages | subscribers | rate/s | achieved/s | first p50 ms | first p99 ms | first max ms | missing | errors | served |"+lateHead); err != nil {
		return err
	}
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"+lateRule)
	for _, r := range results {
		store := "–"
		if r.StoreBefore >= 0 && r.StoreFilled >= 0 {
			store = mib(r.StoreFilled - r.StoreBefore)
		}
		l := r.Late
		head := fmt.Sprintf("| %d | %s | %.0f | %s | %s | %s | %s | %d | %d | %d |",
			r.Keys, secs(r.Fill), perSecond(r.Keys, r.Fill), mib(r.RSSBefore), mib(r.RSSFilled), store,
			secs(r.Snapshot), r.Sync.StatePages, r.Sync.StreamPages, r.Subscribers)
		tail := fmt.Sprintf(" %d of %d | %s | %s | %s | %.0f |", l.Complete, l.Subscribers, secs(l.All), secs(l.Each.P50), secs(l.Each.P99), l.ServerCPU)
		steps := r.Updates
		if len(steps) == 0 {
			if _, err := fmt.Fprintln(w, head+" – | – | – | – | – | – | – | – |"+tail); err != nil {
				return err
			}
		}
		for _, s := range steps {
			served := map[bool]string{true: "yes", false: "no"}[s.Served]
			if s.Stopped != "" {
				served = "no: " + s.Stopped
			}
			_, err := fmt.Fprintf(w, "%s %.0f | %.0f | %s | %s | %s | %d | %d | %s |%s\n", head, s.Rate, s.Achieved,
				ms(s.First.P50), ms(s.First.P99), ms(s.First.Max), s.Missing, s.PublishErrs, served, tail)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// The late snapshot readers' columns (MapsConfig.Late; 0 of 0 without).
const (
	lateHead = " late snapshots complete | late all s | late p50 s | late p99 s | server CPU % while read |"
	lateRule = "---:|---:|---:|---:|---:|"
)

func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
