package api_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
)

// TestChannelControlCharacters: the API refuses a channel name with a
// control character with 107 and a message that says why.
func TestChannelControlCharacters(t *testing.T) {
	n := startNode(t, api.Config{})
	for _, ch := range []string{`a\u0000b`, `a\nb`, `plain:\u001b[31m`, `a\u007f`} {
		got := n.expectError(t, "publish", `{"channel":"`+ch+`","data":1}`, 107)
		if !strings.Contains(got, "control character") {
			t.Errorf("publish to %s: message %q does not name the control character", ch, got)
		}
	}
}

// TestBatchCommandLimit: a batch over MaxBatchCommands (default 1000) is
// refused whole with 107 naming the limit, so that a small request cannot
// buy a reply hundreds of times its size; a batch at the limit runs.
func TestBatchCommandLimit(t *testing.T) {
	cmds := func(n int) string {
		return `{"commands":[` + strings.Repeat(`{"publish":{"channel":"plain:x","data":1}},`, n-1) + `{"publish":{"channel":"plain:x","data":1}}]}`
	}
	n := startNode(t, api.Config{})
	got := n.expectError(t, "batch", cmds(api.DefaultMaxBatchCommands+1), 107)
	if want := "batch: 1001 commands, more than the limit of 1000"; !strings.Contains(got, want) {
		t.Fatalf("message %q, want it to contain %q", got, want)
	}
	if got := n.call(t, "batch", cmds(api.DefaultMaxBatchCommands)); strings.Count(got, `"publish":{}`) != api.DefaultMaxBatchCommands {
		t.Fatalf("batch at the limit: %.200s", got)
	}
	// In transport error mode the refusal is a 400.
	small := startNode(t, api.Config{MaxBatchCommands: 2, ErrorMode: api.ErrorModeTransport})
	if r := small.do(t, http.MethodPost, "batch", cmds(3)); r.status != http.StatusBadRequest || !strings.Contains(r.body, "limit of 2") {
		t.Fatalf("transport mode: %d %s", r.status, r.body)
	}
}

// TestBodyTrickleCutOff: a body that has not fully arrived after
// BodyReadTimeout is answered 408 naming the timeout, and the connection
// is closed; so is a body that declares far more than it sends. A
// declared length reserves no memory (see TestReadBodyDoesNotTrustLength).
func TestBodyTrickleCutOff(t *testing.T) {
	n := startNode(t, api.Config{BodyReadTimeout: 200 * time.Millisecond, MaxBodySize: 2 << 30})
	for _, declared := range []int{200, 1 << 30} {
		t.Run(fmt.Sprint(declared), func(t *testing.T) {
			conn, err := net.Dial("tcp", n.srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			start := time.Now()
			fmt.Fprintf(conn, "POST /api/publish HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Length: %d\r\n\r\n{\"channel\":", testKey, declared)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer to a short body: %v", err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout || !resp.Close ||
				!strings.Contains(string(msg), "request body did not arrive within 200ms") {
				t.Fatalf("status %d close %v %q, want 408 naming the timeout and closing", resp.StatusCode, resp.Close, msg)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("answered after %s", d)
			}
			if _, err := br.ReadByte(); err == nil {
				t.Fatal("connection still open")
			}
		})
	}
	// A body that arrives in time is served as before, on a kept
	// connection (the deadline does not outlive the body).
	n.expect(t, "publish", `{"channel":"plain:x","data":1}`, `{"result":{}}`)
}
