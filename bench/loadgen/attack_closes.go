package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// nodeCounters are the node's counters an attack row quotes.
type nodeCounters struct {
	closes   map[string]float64 // herald_client_disconnects_total by code
	detached float64            // herald_client_blocked_writes_total
}

// disconnectCounts reads the node's counters from its /metrics (none
// when url is empty).
func disconnectCounts(ctx context.Context, url string) (nodeCounters, error) {
	if url == "" {
		return nodeCounters{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nodeCounters{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nodeCounters{}, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nodeCounters{}, fmt.Errorf("metrics: HTTP %d", resp.StatusCode)
	}
	return parseDisconnects(resp.Body)
}

// parseDisconnects reads the counters of a Prometheus text exposition:
// lines herald_client_disconnects_total{code="3008"} 12 and
// herald_client_blocked_writes_total 3.
func parseDisconnects(r io.Reader) (nodeCounters, error) {
	const name, detached = `herald_client_disconnects_total{`, `herald_client_blocked_writes_total `
	out := nodeCounters{closes: map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, detached); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return out, fmt.Errorf("metrics: %q: %w", line, err)
			}
			out.detached = n
			continue
		}
		if !strings.HasPrefix(line, name) {
			continue
		}
		labels, value, ok := strings.Cut(line[len(name):], "} ")
		if !ok {
			continue
		}
		_, code, ok := strings.Cut(labels, `code="`)
		if !ok {
			continue
		}
		code, _, _ = strings.Cut(code, `"`)
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return out, fmt.Errorf("metrics: %q: %w", line, err)
		}
		out.closes[code] += v
	}
	return out, sc.Err()
}

// closesDelta names the connections the node closed between two counts,
// by code ("3000×5 3008×200"), leaving out codes that did not move.
func closesDelta(before, after map[string]float64) string {
	codes := make([]string, 0, len(after))
	for c := range after {
		if after[c] > before[c] {
			codes = append(codes, c)
		}
	}
	slices.Sort(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s×%.0f", c, after[c]-before[c])
	}
	return strings.Join(parts, " ")
}
