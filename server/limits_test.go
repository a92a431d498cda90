package server

import (
	"github.com/heraldhq/herald/config"

	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startStopped starts a node that is shut down when the test ends.
func startStopped(t *testing.T, cfg config.Config) *Server {
	t.Helper()
	s := startServer(t, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

// rawHTTP dials s and returns the connection with a reader of its answers;
// every read fails after 5 s, so no test waits for ever.
func rawHTTP(t *testing.T, s *Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	return conn, bufio.NewReader(conn)
}

// awaitClosed requires the server to close conn (EOF or reset) before the
// read deadline.
func awaitClosed(t *testing.T, br *bufio.Reader) {
	t.Helper()
	_, err := br.ReadByte()
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("connection still open: read %v", err)
	}
}

// TestSilentNewConnectionClosed: a new connection that sends nothing is
// closed after http.idle_timeout, as a keep-alive one between requests is,
// and not after the header timeout (10 s), which bounds a request that has
// begun: clients pool connections dialed ahead of need
// (guard.NewListener).
func TestSilentNewConnectionClosed(t *testing.T) {
	cfg := config.Default()
	cfg.HTTP.IdleTimeout = time.Duration(200 * time.Millisecond)
	s := startStopped(t, cfg)
	_, br := rawHTTP(t, s)
	start := time.Now()
	awaitClosed(t, br)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("closed after %s, before the idle timeout", d)
	}
}

// TestIdleKeepAliveClosed: a keep-alive connection that sends nothing
// after its request is closed after http.idle_timeout.
func TestIdleKeepAliveClosed(t *testing.T) {
	cfg := config.Default()
	cfg.HTTP.IdleTimeout = time.Duration(200 * time.Millisecond)
	s := startStopped(t, cfg)
	conn, br := rawHTTP(t, s)
	fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("status %d close %v, want 200 on a kept connection", resp.StatusCode, resp.Close)
	}
	start := time.Now()
	awaitClosed(t, br)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("closed after %s, before the idle timeout", d)
	}
}

// TestDefaultLimits: the limits are on without any configuration.
func TestDefaultLimits(t *testing.T) {
	cfg := config.Default()
	if cfg.HTTP.IdleTimeoutOrDefault() != 120*time.Second || cfg.HTTPAPI.BodyReadTimeout != 10*time.Second ||
		cfg.HTTPAPI.MaxBatchCommands != 1000 || cfg.HTTPAPI.AllowKeyInQuery {
		t.Fatalf("defaults: %+v %+v", cfg.HTTP, cfg.HTTPAPI)
	}
	cfg.HTTP.IdleTimeout = 0
	if cfg.HTTP.IdleTimeoutOrDefault() != config.DefaultIdleTimeout {
		t.Fatalf("idle_timeout 0 gives %s, want the default", cfg.HTTP.IdleTimeoutOrDefault())
	}
	s := startStopped(t, config.Default())
	if s.http.IdleTimeout != config.DefaultIdleTimeout {
		t.Fatalf("server IdleTimeout %s", s.http.IdleTimeout)
	}
}

// TestAPIBodyReadTimeout: http_api.body_read_timeout cuts off a body that
// trickles in, with 408 and a message saying so, and closes the
// connection.
func TestAPIBodyReadTimeout(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.HTTPAPI.BodyReadTimeout = time.Duration(300 * time.Millisecond)
	s := startStopped(t, cfg)
	conn, br := rawHTTP(t, s)
	body := `{"channel":"chat","data":"` + strings.Repeat("x", 100) + `"}`
	fmt.Fprintf(conn, "POST /api/publish HTTP/1.1\r\nHost: x\r\nX-API-Key: k\r\nContent-Length: %d\r\n\r\n", len(body))
	// One byte every 50 ms: the whole body would take 6 s.
	stop := make(chan struct{})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		for i := 0; i < len(body); i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); <-trickled }()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a trickled body: %v", err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(msg), "300ms") {
		t.Fatalf("status %d %q, want 408 naming the timeout", resp.StatusCode, msg)
	}
	if !resp.Close {
		t.Fatal("408 without Connection: close")
	}
}

// TestAPIConfigLimits: max_batch_commands and allow_key_in_query reach
// the API.
func TestAPIConfigLimits(t *testing.T) {
	post := func(t *testing.T, s *Server, path, body string, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://"+s.Addr()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.HTTPAPI.MaxBatchCommands = 2
	s := startStopped(t, cfg)
	if code, _ := post(t, s, "/api/info?api_key=k", `{}`); code != http.StatusUnauthorized {
		t.Fatalf("key in query by default: status %d, want 401", code)
	}
	cmd := `{"info":{}}`
	code, body := post(t, s, "/api/batch", `{"commands":[`+cmd+`,`+cmd+`]}`, "X-API-Key", "k")
	if code != 200 || strings.Count(body, `"info"`) != 2 {
		t.Fatalf("batch at the limit: %d %s", code, body)
	}
	// An info reply's size depends on the host name; measured here, for
	// max_batch_response_size below.
	infoSize := int64(len(body)-len(`{"replies":[,]}`)) / 2
	code, body = post(t, s, "/api/batch", `{"commands":[`+cmd+`,`+cmd+`,`+cmd+`]}`, "X-API-Key", "k")
	var r struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || code != 200 || r.Error.Code != 107 || !strings.Contains(r.Error.Message, "2") {
		t.Fatalf("batch over the limit: %d %s, want error 107 naming the limit 2", code, body)
	}

	// max_batch_response_size reaches the API: with room for one info
	// reply, the second is error 106 naming the limit.
	one := cfg
	one.HTTPAPI.MaxBatchResponseSize = infoSize * 3 / 2
	s = startStopped(t, one)
	if code, body := post(t, s, "/api/batch", `{"commands":[`+cmd+`,`+cmd+`]}`, "X-API-Key", "k"); code != 200 || strings.Count(body, `"info"`) != 1 || !strings.Contains(body, `"code":106`) || !strings.Contains(body, "max_batch_response_size") {
		t.Fatalf("batch past max_batch_response_size: %d %s, want one info reply and error 106", code, body)
	}

	cfg.HTTPAPI.AllowKeyInQuery = true
	s = startStopped(t, cfg)
	if code, body := post(t, s, "/api/info?api_key=k", `{}`); code != 200 {
		t.Fatalf("allow_key_in_query: %d %s", code, body)
	}
}

func TestValidateLimits(t *testing.T) {
	cfg := config.Default()
	cfg.HTTP.IdleTimeout = -1
	cfg.HTTPAPI.BodyReadTimeout = -1
	cfg.HTTPAPI.MaxBatchCommands = -1
	cfg.HTTPAPI.MaxBatchResponseSize = -1
	err := cfg.Validate()
	for _, key := range []string{"http.idle_timeout", "http_api.body_read_timeout", "http_api.max_batch_commands", "http_api.max_batch_response_size"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("want a problem naming %s, got %v", key, err)
		}
	}
}

// TestUnreadBodyBounded: a body sent to an endpoint that does not read it
// (health checks, metrics, the API of a node without a key) cannot hold
// the connection either: net/http discards it after the answer, and that
// discard is bounded too.
func TestUnreadBodyBounded(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.BodyReadTimeout = time.Duration(300 * time.Millisecond)
	s := startStopped(t, cfg)
	for _, path := range []string{"/healthz", "/api/publish"} {
		t.Run(path, func(t *testing.T) {
			conn, br := rawHTTP(t, s)
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{", path)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer while the body trickles: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			awaitClosed(t, br)
		})
	}
}
