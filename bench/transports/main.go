//go:build linux

// Command transports measures Herald's transports side by side: the
// server's memory per idle connection, and fan-out latency, for WebSocket,
// HTTP-streaming and SSE clients. It is a small harness of its own rather
// than a herald-bench mode because herald-bench speaks only WebSocket.
//
//	idle:   open -n connections of -transport (each connected with a token
//	        whose channels claim subscribes it to one channel), wait -settle,
//	        and report (server RSS after - before) / n from /proc/<pid>.
//	fanout: open -n subscribers, publish -pubs publications at -rate per
//	        second through the server API, each carrying its send time, and
//	        report the latency of every copy (p50, p99, max) and the copies
//	        missing.
//
// Runs must stay shorter than the server's ping interval (25 s): the
// emulated clients here do not answer pings.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"

	"github.com/heraldhq/herald/auth"
)

func main() {
	node := flag.String("node", "http://127.0.0.1:8000", "node base URL")
	transport := flag.String("transport", "websocket", "websocket | http_stream | sse")
	mode := flag.String("mode", "idle", "idle | fanout")
	n := flag.Int("n", 2000, "connections (idle) or subscribers (fanout)")
	pid := flag.Int("pid", 0, "server pid, for RSS (idle)")
	secret := flag.String("secret", "", "HMAC secret of connection tokens")
	apiKey := flag.String("api-key", "", "server API key (fanout)")
	settle := flag.Duration("settle", 3*time.Second, "idle: wait before measuring")
	pubs := flag.Int("pubs", 100, "fanout: publications")
	rate := flag.Float64("rate", 10, "fanout: publications per second")
	payload := flag.Int("payload", 128, "fanout: bytes of padding per publication")
	flag.Parse()
	signer, err := auth.NewHMACSigner(*secret, "HS256")
	if err != nil {
		log.Fatal(err)
	}
	channel := "t-" + *mode
	tok, err := signer.ConnectToken(auth.ConnectClaims{User: "bench", Channels: []string{channel}})
	if err != nil {
		log.Fatal(err)
	}
	h := &harness{node: strings.TrimRight(*node, "/"), transport: *transport, token: tok, client: &http.Client{}, n: *n}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second+time.Duration(float64(*pubs) / *rate * float64(time.Second)))
	defer cancel()
	switch *mode {
	case "idle":
		before := rss(*pid)
		if err := h.open(ctx, *n); err != nil {
			log.Fatal(err)
		}
		time.Sleep(*settle) // letting the server settle: nothing to await
		after := rss(*pid)
		fmt.Printf("transport %s: %d idle connections, server RSS %.1f -> %.1f MiB, %.2f KiB per connection\n",
			*transport, *n, float64(before)/(1<<20), float64(after)/(1<<20), float64(after-before)/float64(*n)/1024)
	case "fanout":
		if err := h.open(ctx, *n); err != nil {
			log.Fatal(err)
		}
		h.fanout(ctx, channel, *apiKey, *pubs, *rate, *payload)
	default:
		log.Fatalf("-mode %q: want idle or fanout", *mode)
	}
}

// harness holds the open connections and what they received.
type harness struct {
	node, transport, token string
	client                 *http.Client
	n                      int

	mu        sync.Mutex
	latencies []time.Duration
	received  atomic.Int64
}

// rss is the resident set of pid in bytes, from /proc.
func rss(pid int) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// open opens n connections, 64 at a time, and returns once each has its
// connect reply.
func (h *harness) open(ctx context.Context, n int) error {
	sem := make(chan struct{}, 64)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready := make(chan struct{})
			go func() {
				if err := h.conn(ctx, ready); err != nil && ctx.Err() == nil {
					select {
					case errs <- err:
					default:
					}
				}
			}()
			select {
			case <-ready:
			case <-ctx.Done():
			}
			<-sem
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	return ctx.Err()
}

// conn holds one connection until ctx ends, closing ready on its connect
// reply and recording the latency of every publication.
func (h *harness) conn(ctx context.Context, ready chan struct{}) error {
	connect := fmt.Sprintf(`{"id":1,"connect":{"token":%q}}`, h.token)
	var lines func() ([]byte, error)
	switch h.transport {
	case "websocket":
		c, _, _, err := ws.Dialer{}.Dial(ctx, "ws"+strings.TrimPrefix(h.node, "http")+"/connection/websocket")
		if err != nil {
			return err
		}
		go func() { <-ctx.Done(); c.Close() }()
		if err := wsutil.WriteClientText(c, []byte(connect)); err != nil {
			return err
		}
		var pending [][]byte
		lines = func() ([]byte, error) {
			for len(pending) == 0 {
				data, err := wsutil.ReadServerText(c)
				if err != nil {
					return nil, err
				}
				pending = bytes.Split(data, []byte("\n"))
			}
			l := pending[0]
			pending = pending[1:]
			return l, nil
		}
	case "http_stream", "sse":
		var req *http.Request
		var err error
		if h.transport == "sse" {
			req, err = http.NewRequestWithContext(ctx, http.MethodGet, h.node+"/connection/sse?cf_connect="+url.QueryEscape(connect), nil)
		} else {
			req, err = http.NewRequestWithContext(ctx, http.MethodPost, h.node+"/connection/http_stream", strings.NewReader(connect))
		}
		if err != nil {
			return err
		}
		resp, err := h.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			return fmt.Errorf("%s: HTTP %d %s", h.transport, resp.StatusCode, b)
		}
		rd := bufio.NewReaderSize(resp.Body, 4096)
		lines = func() ([]byte, error) {
			for {
				l, err := rd.ReadBytes('\n')
				if err != nil {
					return nil, err
				}
				l = bytes.TrimSpace(l)
				if h.transport == "sse" {
					if !bytes.HasPrefix(l, []byte("data:")) {
						continue
					}
					l = bytes.TrimSpace(l[len("data:"):])
				}
				if len(l) > 0 {
					return l, nil
				}
			}
		}
	default:
		return fmt.Errorf("-transport %q: want websocket, http_stream or sse", h.transport)
	}
	connected := false
	for {
		l, err := lines()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if !connected {
			if !bytes.Contains(l, []byte(`"connect"`)) {
				return fmt.Errorf("connect refused: %s", l)
			}
			connected = true
			close(ready)
			continue
		}
		var m struct {
			Push *struct {
				Pub *struct {
					Data struct {
						T int64 `json:"t"`
					} `json:"data"`
				} `json:"pub"`
			} `json:"push"`
		}
		if json.Unmarshal(l, &m) == nil && m.Push != nil && m.Push.Pub != nil && m.Push.Pub.Data.T > 0 {
			d := time.Duration(time.Now().UnixNano() - m.Push.Pub.Data.T)
			h.received.Add(1)
			h.mu.Lock()
			h.latencies = append(h.latencies, d)
			h.mu.Unlock()
		}
	}
}

// fanout publishes and reports the copies' latency.
func (h *harness) fanout(ctx context.Context, channel, apiKey string, pubs int, rate float64, payload int) {
	pad := strings.Repeat("x", payload)
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for i := range pubs {
		<-tick.C
		body := fmt.Sprintf(`{"channel":%q,"data":{"t":%d,"i":%d,"pad":%q}}`, channel, time.Now().UnixNano(), i, pad)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.node+"/api/publish", strings.NewReader(body))
		req.Header.Set("X-API-Key", apiKey)
		resp, err := h.client.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// Wait for the last copies: until no copy arrived for a second.
	last := int64(-1)
	for h.received.Load() != last {
		last = h.received.Load()
		time.Sleep(time.Second) // quiet period: the end of the fan-out has no event
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	slices.Sort(h.latencies)
	q := func(p float64) time.Duration {
		if len(h.latencies) == 0 {
			return 0
		}
		return h.latencies[min(len(h.latencies)-1, int(p*float64(len(h.latencies))))]
	}
	fmt.Printf("transport %s: %d copies (%d expected), p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		h.transport, len(h.latencies), pubs*h.n, ms(q(0.5)), ms(q(0.99)), ms(q(1)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
