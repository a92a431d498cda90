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

// disconnectCounts reads the node's herald_client_disconnects_total by
// code from its /metrics (nil when url is empty).
func disconnectCounts(ctx context.Context, url string) (map[string]float64, error) {
	if url == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: HTTP %d", resp.StatusCode)
	}
	return parseDisconnects(resp.Body)
}

// parseDisconnects reads the disconnect counters of a Prometheus text
// exposition: lines herald_client_disconnects_total{code="3008"} 12.
func parseDisconnects(r io.Reader) (map[string]float64, error) {
	const name = `herald_client_disconnects_total{`
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
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
			return nil, fmt.Errorf("metrics: %q: %w", line, err)
		}
		out[code] += v
	}
	return out, sc.Err()
}

// closesDelta names the connections the node closed between two counts,
// by code ("3008×200 3000×5"), leaving out codes that did not move.
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
