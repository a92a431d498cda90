package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// publishLoop publishes through the nodes' server APIs in turn, at the
// configured rate, to the channels in turn; a few workers keep the rate
// when one call is slow.
func (s *soakState) publishLoop(ctx context.Context) {
	cfg := s.cfg
	client := &http.Client{Timeout: 10 * time.Second}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				s.publishOne(ctx, client, k)
			}
		}()
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / cfg.PubRate))
	defer tick.Stop()
	for k := 0; ; k++ {
		select {
		case <-ctx.Done():
			close(jobs)
			wg.Wait()
			return
		case <-tick.C:
			select {
			case jobs <- k:
			case <-ctx.Done():
			}
		}
	}
}

func (s *soakState) publishOne(ctx context.Context, client *http.Client, k int) {
	cfg := s.cfg
	node := cfg.Nodes[k%len(cfg.Nodes)]
	ch := fmt.Sprintf("%s%d", cfg.Prefix, k%cfg.Channels)
	body, _ := json.Marshal(map[string]any{"channel": ch, "data": map[string]any{"k": k}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, node.API+"/publish", bytes.NewReader(body))
	if err != nil {
		s.fail(&s.publishErrs, "publish request: %v", err)
		return
	}
	req.Header.Set("X-API-Key", cfg.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if !over(ctx) {
			s.fail(&s.publishErrs, "publish to %s: %v", ch, err)
		}
		return
	}
	defer resp.Body.Close()
	var reply struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &reply) != nil || reply.Error != nil {
		s.fail(&s.publishErrs, "publish to %s: HTTP %d %s", ch, resp.StatusCode, bytes.TrimSpace(data))
		return
	}
	s.published.Add(1)
}

// sampleLoop samples every node each SampleEvery until ctx ends, and once
// more at the end.
func (s *soakState) sampleLoop(ctx context.Context) []SoakSample {
	client := &http.Client{Timeout: 5 * time.Second}
	var out []SoakSample
	take := func() {
		at := time.Since(s.start)
		for i, n := range s.cfg.Nodes {
			sm, err := scrapeNode(client, n.Metrics)
			if err != nil {
				s.fail(&s.readErrs, "metrics of node %d: %v", i+1, err)
				continue
			}
			sm.At, sm.Node = at, i+1
			out = append(out, sm)
			if s.cfg.OnSample != nil {
				s.cfg.OnSample(sm)
			}
		}
	}
	tick := time.NewTicker(s.cfg.SampleEvery)
	defer tick.Stop()
	take()
	for {
		select {
		case <-ctx.Done():
			take()
			return out
		case <-tick.C:
			take()
		}
	}
}

// scrapeNode reads the few gauges a soak watches from a node's metrics.
func scrapeNode(client *http.Client, url string) (SoakSample, error) {
	resp, err := client.Get(url)
	if err != nil {
		return SoakSample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return SoakSample{}, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var sm SoakSample
	found := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		var dst *float64
		switch name {
		case "process_resident_memory_bytes":
			dst = &sm.RSS
		case "go_goroutines":
			dst = &sm.Goroutines
		case "process_open_fds":
			dst = &sm.OpenFDs
		case "herald_client_connections":
			dst = &sm.Clients
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return SoakSample{}, fmt.Errorf("%s: %w", name, err)
		}
		*dst = v
		found++
	}
	if err := sc.Err(); err != nil {
		return SoakSample{}, err
	}
	if found < 4 {
		return SoakSample{}, fmt.Errorf("%d of the 4 gauges found (process_resident_memory_bytes, go_goroutines, process_open_fds, herald_client_connections)", found)
	}
	return sm, nil
}
