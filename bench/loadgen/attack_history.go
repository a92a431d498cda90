package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
)

// historyTally counts the answers of history calls with limit -1.
type historyTally struct {
	mu       sync.Mutex
	calls    int
	full     int   // answered with publications
	refused  int   // answered with an error
	failed   int   // no answer (transport error)
	largest  int64 // bytes of the largest answer
	firstErr string
}

func (t *historyTally) add(size int64, refusal string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls++
	t.largest = max(t.largest, size)
	switch {
	case err != nil:
		t.failed++
		if t.firstErr == "" {
			t.firstErr = err.Error()
		}
	case refusal != "":
		t.refused++
		if t.firstErr == "" {
			t.firstErr = refusal
		}
	default:
		t.full++
	}
}

func (t *historyTally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := fmt.Sprintf("%d calls: %d answered with the history, %d refused, %d failed; largest answer %s MiB", t.calls, t.full, t.refused, t.failed, mib(t.largest))
	if t.firstErr != "" {
		s += "; first: " + t.firstErr
	}
	return s
}

// runConcurrently runs call n at a time, again and again, until ctx
// ends.
func runConcurrently(ctx context.Context, n int, call func(ctx context.Context)) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				call(ctx)
			}
		}()
	}
	wg.Wait()
}

// attackHistoryHTTP calls the HTTP API's history with limit -1 on
// cfg.Channel, cfg.Concurrency at a time, reading every answer whole.
func attackHistoryHTTP(ctx context.Context, cfg AttackConfig, _ func(string)) (string, error) {
	if cfg.Channel == "" || cfg.Concurrency < 1 {
		return "", fmt.Errorf("%w: history-http needs a channel and a concurrency", errAttackConfig)
	}
	body, _ := json.Marshal(map[string]any{"channel": cfg.Channel, "limit": -1})
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Concurrency, DisableCompression: true}}
	defer client.CloseIdleConnections()
	var t historyTally
	runConcurrently(ctx, cfg.Concurrency, func(ctx context.Context) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.APIURL+"/history", bytes.NewReader(body))
		if err != nil {
			t.add(0, "", err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", cfg.APIKey)
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				t.add(0, "", err)
			}
			return
		}
		defer resp.Body.Close()
		// The start tells a refusal ({"error":…}) from publications.
		head := make([]byte, 512)
		n, _ := io.ReadFull(resp.Body, head)
		rest, err := io.Copy(io.Discard, resp.Body)
		if err != nil && ctx.Err() != nil {
			return
		}
		refusal := ""
		if resp.StatusCode != http.StatusOK {
			refusal = fmt.Sprintf("HTTP %d", resp.StatusCode)
		} else if bytes.HasPrefix(bytes.TrimSpace(head[:n]), []byte(`{"error"`)) {
			refusal = string(bytes.TrimSpace(head[:n]))
		}
		t.add(int64(n)+rest, refusal, err)
	})
	return t.String(), nil
}

// attackHistoryGRPC calls the gRPC API's History with limit -1 on
// cfg.Channel, cfg.Concurrency at a time, over one connection, taking
// answers of any size.
func attackHistoryGRPC(ctx context.Context, cfg AttackConfig, _ func(string)) (string, error) {
	if cfg.Channel == "" || cfg.Concurrency < 1 || cfg.GRPCAddr == "" {
		return "", fmt.Errorf("%w: history-grpc needs a channel, a concurrency and a gRPC address", errAttackConfig)
	}
	cc, err := grpc.NewClient(cfg.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		return "", fmt.Errorf("history-grpc: %w", err)
	}
	defer cc.Close()
	client := apiproto.NewCentrifugoApiClient(cc)
	var t historyTally
	runConcurrently(ctx, cfg.Concurrency, func(ctx context.Context) {
		cctx := metadata.AppendToOutgoingContext(ctx, "authorization", "apikey "+cfg.APIKey)
		resp, err := client.History(cctx, &apiproto.HistoryRequest{Channel: cfg.Channel, Limit: -1})
		if err != nil {
			if ctx.Err() == nil {
				t.add(0, "", err)
			}
			return
		}
		refusal := ""
		if e := resp.GetError(); e != nil {
			refusal = fmt.Sprintf("error %d %s", e.GetCode(), e.GetMessage())
		}
		t.add(int64(proto.Size(resp)), refusal, nil)
	})
	return t.String(), nil
}
