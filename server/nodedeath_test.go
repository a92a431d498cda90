//go:build unix

package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// nodeDeathPresenceTTL is short so that the test sees a dead node's
// presence entries expire; the hub refreshes them every third of it.
const nodeDeathPresenceTTL = 3 * time.Second

// heraldBin returns HERALD_BIN, or builds cmd/herald into a directory
// removed when t ends.
func heraldBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("HERALD_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "herald")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../cmd/herald").CombinedOutput(); err != nil {
		t.Fatalf("build herald: %v\n%s", err, out)
	}
	return bin
}

// heraldProc is one herald process of the test.
type heraldProc struct {
	name string
	addr string
	cmd  *exec.Cmd
	out  *testenv.LockedBuffer
	done chan struct{} // closed when the process has exited
}

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startHerald runs bin with a configuration for node name on the
// PostgreSQL engine and waits until it is ready. The process is stopped
// when t ends if it still runs.
func startHerald(t *testing.T, bin, name, dsn, schema string) *heraldProc {
	t.Helper()
	addr := freeAddr(t)
	cfg := fmt.Sprintf(`address: %q
name: %s
log: {level: info, format: json}
engine:
  type: postgres
  postgres: {dsn: %q, schema: %s}
client:
  token: {hmac_secret_key: secret}
  presence_ttl: %s
channel:
  namespaces:
    - name: nd
      presence: true
      history_size: 10000
      history_ttl: 300s
      force_recovery: true
      allow_subscribe_for_client: true
      allow_presence_for_subscriber: true
http_api: {key: k}
websocket: {ip_rate_limit: -1}
shutdown: {drain_window: 50ms, timeout: 10s}
`, addr, name, dsn, schema, nodeDeathPresenceTTL)
	return runHerald(t, bin, name, addr, cfg)
}

// runHerald runs bin as node name with the configuration cfg, which
// listens on addr, and waits until it is ready. The process is stopped
// when t ends if it still runs.
func runHerald(t *testing.T, bin, name, addr, cfg string) *heraldProc {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &heraldProc{name: name, addr: addr, out: &testenv.LockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve", "--config", path)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Errorf("%s did not stop on SIGTERM", name)
		}
	})
	testenv.Eventually(t, name+" to be ready", 30*time.Second, func() bool {
		select {
		case <-p.done:
			t.Fatalf("%s exited: %s", name, p.out.String())
		default:
		}
		r, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
	return p
}

// linesAt returns the lines p logged at level (ERROR, WARN).
func (p *heraldProc) linesAt(level string) []string {
	var out []string
	for line := range strings.Lines(p.out.String()) {
		if strings.Contains(line, `"level":"`+level+`"`) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// followClient follows one channel across reconnects, as an SDK does:
// after losing its node it connects to another and resubscribes with
// recovery from the last offset it saw.
type followClient struct {
	user  string
	addrs []string // the nodes to try, the first one first

	mu       sync.Mutex
	client   string // connection id on the current node
	epoch    string
	offsets  []uint64
	data     []string
	moves    int
	recovers int
}

// follow reads ch until it has seen offset last or ctx ends, reconnecting
// through the other nodes when its node goes away.
func (s *followClient) follow(ctx context.Context, ch string, last uint64, subscribed chan<- struct{}) error {
	var lastErr error
	for attempt := 0; ctx.Err() == nil; attempt++ {
		addr := s.addrs[attempt%len(s.addrs)]
		if attempt > 0 {
			time.Sleep(20 * time.Millisecond) // an SDK's reconnect backoff, shortened
		}
		c, err := dialAddr(ctx, addr, s.user, 0, 5*time.Second)
		if err != nil {
			lastErr = err
			continue
		}
		done, err := s.read(ctx, c, ch, last, subscribed)
		c.Close()
		if done {
			return nil
		}
		lastErr = err
		subscribed = nil
		s.mu.Lock()
		s.moves++
		s.mu.Unlock()
	}
	return fmt.Errorf("%s: %w (last error: %v)", s.user, ctx.Err(), lastErr)
}

// read subscribes through c, recovering from the last offset seen, and
// records publications until offset last or until the connection fails.
func (s *followClient) read(ctx context.Context, c *wsClient, ch string, last uint64, subscribed chan<- struct{}) (bool, error) {
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	s.mu.Lock()
	req := jsonclient.SubscribeRequest{Channel: ch}
	if s.epoch != "" {
		req.Recover, req.Epoch = true, s.epoch
		if n := len(s.offsets); n > 0 {
			req.Offset = s.offsets[n-1]
		}
	}
	s.client = c.client
	s.mu.Unlock()
	id, err := c.SubscribeAll([]jsonclient.SubscribeRequest{req})
	if err != nil {
		return false, err
	}
	m, err := c.AwaitReply(id, time.Now().Add(10*time.Second), nil)
	if err != nil {
		return false, fmt.Errorf("subscribe: %w", err)
	}
	sub := m.Subscribe
	s.mu.Lock()
	if req.Recover {
		s.recovers++
		if !sub.Recovered {
			s.mu.Unlock()
			return false, fmt.Errorf("subscribe from %s:%d: not recovered", req.Epoch, req.Offset)
		}
	}
	s.epoch = sub.Epoch
	for _, p := range sub.Publications {
		s.offsets, s.data = append(s.offsets, p.Offset), append(s.data, string(p.Data))
	}
	s.mu.Unlock()
	if subscribed != nil {
		subscribed <- struct{}{}
	}
	for {
		s.mu.Lock()
		n := len(s.offsets)
		reached := n > 0 && s.offsets[n-1] >= last
		s.mu.Unlock()
		if reached {
			return true, nil
		}
		m, err := c.Next(time.Now().Add(30 * time.Second))
		if err != nil {
			return false, err
		}
		if m.Push != nil && m.Push.Pub != nil && m.Push.Channel == ch {
			s.mu.Lock()
			s.offsets, s.data = append(s.offsets, m.Push.Pub.Offset), append(s.data, string(m.Push.Pub.Data))
			s.mu.Unlock()
		}
	}
}

// TestNodeDeath SIGKILLs one of three herald processes on the PostgreSQL
// engine while the API publishes a stream to a channel with history and
// recovery. Its clients reconnect to the other nodes and recover: every
// client ends with every publication exactly once, in order. The dead
// node's presence entries disappear from the others within presence_ttl,
// and the surviving nodes log nothing at error level.
func TestNodeDeath(t *testing.T) {
	dsn := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
	bin := heraldBin(t)
	testenv.LockPostgres(t)
	schema := "herald_nd_" + strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() { dropSchema(t, dsn, schema) })

	start := time.Now()
	var nodes []*heraldProc
	for i := range 3 {
		nodes = append(nodes, startHerald(t, bin, fmt.Sprintf("node%d", i+1), dsn, schema))
	}
	victim, survivors := nodes[2], nodes[:2]
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Second)
	defer cancel()

	const (
		ch            = "nd:stream"
		total         = 600
		clientsOnNode = 3
	)
	var clients []*followClient
	subscribed := make(chan struct{}, 3*clientsOnNode)
	errs := make(chan error, 3*clientsOnNode)
	var wg sync.WaitGroup
	for i, n := range nodes {
		for j := range clientsOnNode {
			// Each client starts on its node and moves to the next one.
			addrs := []string{n.addr, nodes[(i+1)%3].addr, nodes[(i+2)%3].addr}
			sc := &followClient{user: fmt.Sprintf("u%d-%d", i+1, j), addrs: addrs}
			clients = append(clients, sc)
			wg.Go(func() {
				if err := sc.follow(ctx, ch, total, subscribed); err != nil {
					errs <- err
				}
			})
		}
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	for range clients {
		select {
		case <-subscribed:
		case err := <-errs:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatal("clients did not subscribe")
		}
	}
	victimClients := make(map[string]bool)
	for _, sc := range clients[2*clientsOnNode:] {
		sc.mu.Lock()
		victimClients[sc.client] = true
		sc.mu.Unlock()
	}
	testenv.Eventually(t, "presence of every client", 10*time.Second, func() bool {
		return len(presenceOf(ctx, survivors[0].addr, ch)) == len(clients)
	})

	// Publish through the survivors at a steady pace, and kill the victim
	// a third of the way.
	var (
		killedAt  time.Time
		goneAfter time.Duration
	)
	presenceGone := make(chan struct{})
	for i := 1; i <= total; i++ {
		if i == total/3 {
			if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killedAt = time.Now()
			go func() {
				defer close(presenceGone)
				// Polled from here, beside the stream, to time the
				// expiry closely; a failed read counts as still there.
				for ctx.Err() == nil && time.Since(killedAt) < nodeDeathPresenceTTL+10*time.Second {
					ids := presenceOf(ctx, survivors[0].addr, ch)
					gone := ids != nil
					for id := range ids {
						gone = gone && !victimClients[id]
					}
					if gone {
						goneAfter = time.Since(killedAt)
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
		}
		body := fmt.Sprintf(`{"channel":%q,"data":{"i":%d}}`, ch, i)
		if _, err := apiPostAddr(ctx, survivors[i%2].addr, "publish", []byte(body)); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("published %d through 2 nodes; node killed at %d", total, total/3)

	// Presence: the victim's entries go within presence_ttl of its death.
	<-presenceGone
	gone := goneAfter
	if gone == 0 {
		t.Fatalf("the dead node's presence was still listed %v after the kill", nodeDeathPresenceTTL+10*time.Second)
	}
	t.Logf("dead node's presence gone %v after the kill (presence_ttl %v)", gone.Round(time.Millisecond), nodeDeathPresenceTTL)
	if gone > nodeDeathPresenceTTL+time.Second {
		t.Errorf("dead node's presence outlived it by %v, want at most presence_ttl %v (+1s)", gone, nodeDeathPresenceTTL)
	}

	// The cluster view: the survivors stop counting the dead node once
	// its heartbeats (control messages every 3 s) have been missing for
	// 10 s.
	for _, n := range survivors {
		testenv.Eventually(t, n.name+" to count two nodes", 20*time.Second, func() bool {
			return clusterNodes(ctx, n.addr) == 2
		})
	}
	t.Logf("survivors count two nodes %v after the kill", time.Since(killedAt).Round(time.Millisecond))

	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, sc := range clients {
		sc.mu.Lock()
		checkFollowed(t, sc.user, sc.offsets, sc.data, total)
		t.Logf("%s: %d publications, %d moves, %d recoveries", sc.user, len(sc.offsets), sc.moves, sc.recovers)
		if victimClients[sc.client] || sc.moves > 0 {
			if sc.recovers == 0 {
				t.Errorf("%s moved without recovering", sc.user)
			}
		}
		sc.mu.Unlock()
	}
	for _, sc := range clients[2*clientsOnNode:] {
		if sc.moves == 0 {
			t.Errorf("%s, a client of the killed node, never moved", sc.user)
		}
	}
	for _, n := range survivors {
		for _, l := range n.linesAt("WARN") {
			t.Logf("%s warned: %s", n.name, l)
		}
		if lines := n.linesAt("ERROR"); len(lines) > 0 {
			t.Errorf("%s logged errors:\n%s", n.name, strings.Join(lines, "\n"))
		}
	}
	took := time.Since(start)
	t.Logf("three nodes started, stream published and checked in %v", took.Round(time.Millisecond))
	if took > 60*time.Second {
		t.Errorf("took %v, want under a minute", took)
	}
}

// checkFollowed checks that a client saw offsets 1..total exactly once, in
// order, each with its own data.
func checkFollowed(t *testing.T, who string, offsets []uint64, data []string, total int) {
	t.Helper()
	if len(offsets) != total {
		t.Errorf("%s: %d publications, want %d", who, len(offsets), total)
	}
	for i, off := range offsets {
		if off != uint64(i+1) {
			t.Errorf("%s: publication %d has offset %d, want %d (missing or duplicated)", who, i, off, i+1)
			return
		}
		if want := fmt.Sprintf(`{"i":%d}`, i+1); data[i] != want {
			t.Errorf("%s: offset %d carries %s, want %s", who, off, data[i], want)
			return
		}
	}
}

// presenceOf lists the client ids in ch's presence, as the node at addr
// sees it; nil on error.
func presenceOf(ctx context.Context, addr, ch string) map[string]bool {
	b, err := apiPostAddr(ctx, addr, "presence", fmt.Appendf(nil, `{"channel":%q}`, ch))
	if err != nil {
		return nil
	}
	var r struct {
		Result struct {
			Presence map[string]json.RawMessage `json:"presence"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &r) != nil {
		return nil
	}
	out := make(map[string]bool, len(r.Result.Presence))
	for id := range r.Result.Presence {
		out[id] = true
	}
	return out
}

// apiPostAddr calls the API of the node at addr.
func apiPostAddr(ctx context.Context, addr, method string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/api/"+method, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-Key", "k")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("api %s: %w", method, err)
	}
	defer r.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return nil, err
	}
	if r.StatusCode != http.StatusOK || bytes.Contains(buf.Bytes(), []byte(`"error"`)) {
		return nil, fmt.Errorf("api %s: status %d: %.300s", method, r.StatusCode, buf.Bytes())
	}
	return buf.Bytes(), nil
}

// dropSchema drops schema when the test is done with it.
func dropSchema(t *testing.T, dsn, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
	}
}

// clusterNodes reads herald_cluster_nodes from the node at addr; -1 on
// error.
func clusterNodes(ctx context.Context, addr string) float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return -1
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer r.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return -1
	}
	for line := range strings.Lines(buf.String()) {
		if v, ok := strings.CutPrefix(line, "herald_cluster_nodes "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
	}
	return -1
}
