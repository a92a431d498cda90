package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/protocol"
)

// The connect cost of issue 37's paid features (herald-bench paid): token
// revocation and user blocking are checked at every connect against the
// node's in-memory copy of the decisions, so a connect should cost the
// same with none loaded and with many; and get_user_status of 1,000 users
// should answer within 10 ms on PostgreSQL.

// PaidConfig is one measurement of RunPaid.
type PaidConfig struct {
	// URL is the WebSocket endpoint; APIURL and APIKey the server API.
	URL, APIURL, APIKey string
	// Secret signs the connection tokens (HS256), each with a jti of its
	// own and iat, so that both checks run.
	Secret string
	// Revoked jtis and Blocked users are loaded through the API before
	// the connects (none of them the connecting clients'), in batches of
	// Batch commands.
	Revoked, Blocked, Batch int
	// Connects are made by Concurrency workers, each a fresh WebSocket
	// connection whose connect command is answered, then closed.
	Connects, Concurrency int
	// StatusUsers users get a status (update_user_status), then
	// get_user_status asks for all of them at once StatusRounds times.
	StatusUsers, StatusRounds int
	// Timeout bounds each connect and each API call.
	Timeout time.Duration
	// RateLimits says the node runs with PaidRateLimitsYAML: once the
	// rest is measured, a probe checks that its limits are on.
	RateLimits bool
}

// PaidResult is what RunPaid measured.
type PaidResult struct {
	Revoked, Blocked int
	// Load is how long loading the decisions took.
	Load time.Duration
	// Connected and Failed count the connects; Rate is Connected over
	// the connects' wall time.
	Connected, Failed int
	Rate              float64
	// Connect is the time from dialing to the connect reply.
	Connect Percentiles
	// FirstError is the first failed connect's error, if any.
	FirstError string `json:",omitempty"`
	// StatusUsers is how many users each get_user_status asked for;
	// Status its latency, over the rounds.
	StatusUsers int
	Status      Percentiles
	// RateLimits is true when the probe found the node's rate limits on
	// (PaidConfig.RateLimits).
	RateLimits bool
}

// RunPaid loads the decisions, measures the connects, then
// get_user_status; then, with cfg.RateLimits, probes the node's rate
// limits.
func RunPaid(ctx context.Context, cfg PaidConfig, progress func(string, ...any)) (PaidResult, error) {
	cfg.Batch = max(cfg.Batch, 1)
	cfg.Concurrency = max(cfg.Concurrency, 1)
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	res := PaidResult{Revoked: cfg.Revoked, Blocked: cfg.Blocked, StatusUsers: cfg.StatusUsers}
	api := NewAPIPublisher(cfg.APIURL, cfg.APIKey, 4, cfg.Timeout)
	// A run's names are its own: a second run on the same store neither
	// finds its jtis revoked nor its users blocked.
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	expire := time.Now().Add(time.Hour).Unix()

	start := time.Now()
	if err := apiBatches(ctx, api, cfg.Revoked, cfg.Batch, func(i int) string {
		return fmt.Sprintf(`{"revoke_token":{"uid":"rv-%s-%d","expire_at":%d}}`, run, i, expire)
	}); err != nil {
		return res, fmt.Errorf("revoke tokens: %w", err)
	}
	if err := apiBatches(ctx, api, cfg.Blocked, cfg.Batch, func(i int) string {
		return fmt.Sprintf(`{"block_user":{"user":"bl-%s-%d","expire_at":%d}}`, run, i, expire)
	}); err != nil {
		return res, fmt.Errorf("block users: %w", err)
	}
	res.Load = time.Since(start)
	progress("loaded %d revoked jtis and %d blocked users in %v", cfg.Revoked, cfg.Blocked, res.Load.Round(time.Millisecond))

	if err := runPaidConnects(ctx, cfg, run, &res); err != nil {
		return res, err
	}
	progress("connects: %d ok, %d failed, %.0f/s", res.Connected, res.Failed, res.Rate)

	if cfg.StatusUsers > 0 && cfg.StatusRounds > 0 {
		st, err := measureUserStatus(ctx, api, cfg, run)
		if err != nil {
			return res, err
		}
		res.Status = st
		progress("get_user_status of %d users: p50 %v, p99 %v", cfg.StatusUsers, st.P50, st.P99)
	}
	if cfg.RateLimits {
		if err := probeRateLimits(ctx, cfg, run); err != nil {
			return res, err
		}
		res.RateLimits = true
		progress("rate limits: on (a probe over its limit was refused with error %d per connection and per user)", protocol.ErrorTooManyRequests)
	}
	return res, nil
}

// apiBatches sends n commands, command(i) for each, in batches.
func apiBatches(ctx context.Context, api *APIPublisher, n, batch int, command func(i int) string) error {
	for from := 0; from < n; from += batch {
		to := min(from+batch, n)
		var b strings.Builder
		b.WriteString(`{"commands":[`)
		for i := from; i < to; i++ {
			if i > from {
				b.WriteByte(',')
			}
			b.WriteString(command(i))
		}
		b.WriteString(`],"parallel":true}`)
		raw, err := api.post(ctx, "batch", []byte(b.String()))
		if err != nil {
			return err
		}
		if _, err := countAPIReplies("batch", raw, to-from); err != nil {
			return err
		}
	}
	return nil
}

// runPaidConnects makes the connects; the tokens are signed first, so the
// time measured is the server's and the network's.
func runPaidConnects(ctx context.Context, cfg PaidConfig, run string, res *PaidResult) error {
	signer, err := auth.NewHMACSigner(cfg.Secret, "HS256")
	if err != nil {
		return fmt.Errorf("token signer: %w", err)
	}
	now := time.Now()
	tokens := make([]string, cfg.Connects)
	for i := range tokens {
		tokens[i], err = signer.ConnectToken(auth.ConnectClaims{
			User: fmt.Sprintf("pu-%s-%d", run, i), ID: fmt.Sprintf("pj-%s-%d", run, i),
			IssuedAt: now, ExpiresAt: now.Add(time.Hour),
		})
		if err != nil {
			return fmt.Errorf("mint token: %w", err)
		}
	}
	var (
		next   atomic.Int64
		mu     sync.Mutex
		hist   = NewHistogram()
		failed int
		first  error
		wg     sync.WaitGroup
	)
	start := time.Now()
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(tokens) {
					return
				}
				t0 := time.Now()
				err := paidConnect(ctx, cfg, tokens[i])
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					failed++
					if first == nil {
						first = err
					}
				} else {
					hist.Record(d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	res.Connect = hist.Percentiles()
	res.Connected, res.Failed = int(res.Connect.Count), failed
	res.Rate = float64(res.Connected) / wall.Seconds()
	if first != nil {
		res.FirstError = first.Error()
	}
	return ctx.Err()
}

// paidConnect dials, sends the connect command (JSON) and waits for its
// reply, then closes.
func paidConnect(ctx context.Context, cfg PaidConfig, token string) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	c, err := paidDial(ctx, cfg, token)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	return nil
}

// paidDial dials and connects with token (command id 1); the connection
// reads until ctx's deadline.
func paidDial(ctx context.Context, cfg PaidConfig, token string) (*websocket.Conn, error) {
	c, _, err := websocket.DefaultDialer.DialContext(ctx, cfg.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetReadDeadline(dl)
	}
	cmd, _ := json.Marshal(map[string]any{"id": 1, "connect": map[string]string{"token": token, "name": "herald-bench"}})
	r, err := paidCommand(c, 1, cmd)
	if err == nil && r.Error != nil {
		err = fmt.Errorf("error %d %s", r.Error.Code, r.Error.Message)
	} else if err == nil && r.Connect == nil {
		err = errors.New("reply without a result")
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	return c, nil
}

// paidReply is a reply to one command of the JSON protocol.
type paidReply struct {
	ID    uint32 `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Connect json.RawMessage `json:"connect"`
}

// paidCommand sends cmd (JSON, of command id) and reads until its reply.
func paidCommand(c *websocket.Conn, id uint32, cmd []byte) (paidReply, error) {
	if err := c.WriteMessage(websocket.TextMessage, cmd); err != nil {
		return paidReply{}, fmt.Errorf("send: %w", err)
	}
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			return paidReply{}, fmt.Errorf("read reply: %w", err)
		}
		// One frame may hold several replies, one JSON object a line.
		for line := range strings.SplitSeq(string(data), "\n") {
			var r paidReply
			if line != "" && json.Unmarshal([]byte(line), &r) == nil && r.ID == id {
				return r, nil
			}
		}
	}
}

// measureUserStatus gives StatusUsers users a status, then times
// get_user_status of all of them at once.
func measureUserStatus(ctx context.Context, api *APIPublisher, cfg PaidConfig, run string) (Percentiles, error) {
	users := make([]string, cfg.StatusUsers)
	for i := range users {
		users[i] = fmt.Sprintf("st-%s-%d", run, i)
	}
	// update_user_status takes up to 1,000 users a call.
	for from := 0; from < len(users); from += 1000 {
		body, _ := json.Marshal(map[string]any{"users": users[from:min(from+1000, len(users))], "state": "bench"})
		raw, err := api.post(ctx, "update_user_status", body)
		if err != nil {
			return Percentiles{}, err
		}
		if _, err := countAPIReplies("update_user_status", raw, 1); err != nil {
			return Percentiles{}, err
		}
	}
	body, _ := json.Marshal(map[string]any{"users": users})
	hist := NewHistogram()
	for range cfg.StatusRounds {
		t0 := time.Now()
		raw, err := api.post(ctx, "get_user_status", body)
		d := time.Since(t0)
		if err != nil {
			return Percentiles{}, err
		}
		var r struct {
			Result struct {
				Statuses []struct {
					Active int64 `json:"active"`
				} `json:"statuses"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return Percentiles{}, fmt.Errorf("get_user_status: %w", err)
		}
		if got := len(r.Result.Statuses); got != len(users) || r.Result.Statuses[0].Active == 0 {
			return Percentiles{}, fmt.Errorf("get_user_status: %d statuses for %d users (first active %v): %.200s", got, len(users), got > 0 && r.Result.Statuses[0].Active != 0, raw)
		}
		hist.Record(d)
	}
	return hist.Percentiles(), nil
}
