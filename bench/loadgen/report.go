package loadgen

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// WriteMarkdown writes the steps as a Markdown table: latency in
// milliseconds from the intended send time, of the first copy of each
// publication and of all copies.
//
// When the servers ran under a CPU quota (their cgroups counted
// enforcement periods during some step), two columns follow: the periods
// in which the quota ran out, of those that elapsed, and the time the
// servers' tasks waited for the next period.
func WriteMarkdown(w io.Writer, steps []StepResult) error {
	quota := slices.ContainsFunc(steps, func(s StepResult) bool { return s.ServerThrottle.Periods > 0 })
	head, rule := "| step | offered msg/s | achieved msg/s | deliveries/s | first p50 | first p95 | first p99 | first max | all p50 | all p95 | all p99 | all max | last p99 | missing | dup | server CPU % | bench CPU % |",
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	if quota {
		head, rule = head+" throttled periods | throttled ms |", rule+"---:|---:|"
	}
	if _, err := fmt.Fprintln(w, head); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, rule); err != nil {
		return err
	}
	for _, s := range steps {
		dir := "↑"
		if s.Down {
			dir = "↓"
		}
		_, err := fmt.Fprintf(w, "| %d%s | %.0f | %.0f | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d | %.0f | %.0f |",
			s.Index, dir, s.Rate, s.Achieved, s.Deliveries,
			ms(s.First.P50), ms(s.First.P95), ms(s.First.P99), ms(s.First.Max),
			ms(s.All.P50), ms(s.All.P95), ms(s.All.P99), ms(s.All.Max), ms(s.Last.P99),
			s.Missing, s.Duplicates, s.ServerCPU, s.BenchCPU)
		if err != nil {
			return err
		}
		if quota {
			t := s.ServerThrottle
			if _, err := fmt.Fprintf(w, " %d of %d | %s |\n", t.Throttled, t.Periods, ms(t.Waited)); err != nil {
				return err
			}
		} else if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	return nil
}

// ms formats a latency in milliseconds with sensible precision.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
}

// csvHeader names WriteCSV's columns; latencies are in microseconds.
var csvHeader = []string{
	"step", "direction", "offered_rate", "duration_s", "offered", "sent", "accepted", "publish_errors", "achieved_rate", "lag_us",
	"subscribers", "expected", "received", "missing", "duplicates", "deliveries_per_s",
	"first_p50_us", "first_p95_us", "first_p99_us", "first_p999_us", "first_max_us",
	"all_p50_us", "all_p95_us", "all_p99_us", "all_p999_us", "all_max_us",
	"last_p50_us", "last_p95_us", "last_p99_us", "last_p999_us", "last_max_us",
	"server_cpu_percent", "server_rss_bytes", "bench_cpu_percent",
	"server_cgroup_periods", "server_cgroup_throttled", "server_cgroup_throttled_us",
}

// WriteCSV writes one row per step.
func WriteCSV(w io.Writer, steps []StepResult) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	us := func(d time.Duration) string { return strconv.FormatInt(int64(d/time.Microsecond), 10) }
	pct := func(p Percentiles) []string { return []string{us(p.P50), us(p.P95), us(p.P99), us(p.P999), us(p.Max)} }
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, s := range steps {
		dir := "up"
		if s.Down {
			dir = "down"
		}
		row := []string{strconv.Itoa(s.Index), dir, f(s.Rate), f(s.Duration.Seconds()), strconv.Itoa(s.Offered), strconv.Itoa(s.Sent),
			i64(s.Accepted), i64(s.Errors), f(s.Achieved), us(s.Lag),
			strconv.Itoa(s.Subscribers), i64(s.Expected), i64(s.Received), i64(s.Missing), i64(s.Duplicates), f(s.Deliveries)}
		row = append(row, pct(s.First)...)
		row = append(row, pct(s.All)...)
		row = append(row, pct(s.Last)...)
		row = append(row, f(s.ServerCPU), i64(s.ServerRSS), f(s.BenchCPU))
		row = append(row, i64(s.ServerThrottle.Periods), i64(s.ServerThrottle.Throttled), us(s.ServerThrottle.Waited))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
