package sharded

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// recorder hands each publication's data to a Go channel per engine
// channel.
type recorder struct {
	mu   sync.Mutex
	pubs map[string]chan string
}

func newRecorder() *recorder { return &recorder{pubs: map[string]chan string{}} }

func (r *recorder) ch(name string) chan string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.pubs[name]
	if !ok {
		c = make(chan string, 1000)
		r.pubs[name] = c
	}
	return c
}

func (r *recorder) HandlePublication(ch string, pub *engine.Publication, _ engine.StreamPosition) {
	r.ch(ch) <- string(pub.Data)
}
func (r *recorder) HandleJoin(string, *engine.ClientInfo)  {}
func (r *recorder) HandleLeave(string, *engine.ClientInfo) {}
func (r *recorder) HandleControl([]byte)                   {}

// await waits for data on ch, skipping other publications (a publish that
// failed on the caller's side may still have been delivered).
func (r *recorder) await(t testing.TB, ch, data string) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case got := <-r.ch(ch):
			if got == data {
				return
			}
		case <-timeout:
			t.Fatalf("%s: %s not delivered within 15s", ch, data)
		}
	}
}

// redisServer is a redis-server a test runs on its own loopback port, so
// that it can stop and start it.
type redisServer struct {
	t    testing.TB
	bin  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

func startRedis(t testing.TB) *redisServer {
	t.Helper()
	s := &redisServer{t: t, bin: testenv.Binary(t, "redis-server"), port: testenv.FreePort(t)}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// start runs the server (no persistence: a restart loses its data, as a
// replaced instance would) and waits until it accepts connections.
func (s *redisServer) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no")
	s.done = make(chan struct{})
	out := &testenv.LockedBuffer{}
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(s.cmd, s.done)
	testenv.Eventually(s.t, "redis-server listening on "+s.addr(), 10*time.Second, func() bool {
		select {
		case <-s.done:
			s.t.Fatalf("redis-server exited: %s", out.String())
		default:
		}
		c, err := net.DialTimeout("tcp", s.addr(), time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
}

// stop ends the server and waits for it to exit.
func (s *redisServer) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Kill)
	<-s.done
	s.cmd = nil
}

// TestShardDownRedis stops one of two Redis shards mid-run: the other
// shard's channel keeps publishing, delivering and reading history; the
// stopped shard's channel fails with an error naming the shard, and
// recovers (publish, delivery to the existing subscription) once the
// server is back.
func TestShardDownRedis(t *testing.T) {
	a, b := startRedis(t), startRedis(t)
	cfgs := redisConfigs(t, a.addr(), b.addr())
	subRec := newRecorder()
	mk := func() *Engine {
		return enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) { return newRedis(ctx, cfgs) })
	}
	sub, pub := mk(), mk()
	enginetest.StartEngine(t, sub, subRec)
	enginetest.StartEngine(t, pub, nopHandler{})
	up, down := channelOn(t, 2, 0, "up"), channelOn(t, 2, 1, "down")
	hist := engine.PublishOptions{HistorySize: 100, HistoryTTL: time.Minute}
	call := func() context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	for _, ch := range []string{up, down} {
		if err := sub.Subscribe(call(), ch); err != nil {
			t.Fatalf("Subscribe(%q): %v", ch, err)
		}
		if _, err := pub.Publish(call(), ch, &engine.Publication{Data: []byte(`"before"`)}, hist); err != nil {
			t.Fatalf("Publish(%q): %v", ch, err)
		}
		subRec.await(t, ch, `"before"`)
	}

	b.stop()
	if _, err := pub.Publish(call(), down, &engine.Publication{Data: []byte(`"lost"`)}, hist); err == nil {
		t.Fatalf("Publish to the stopped shard's channel succeeded")
	} else if !strings.Contains(err.Error(), "shard 1") {
		t.Errorf("Publish to the stopped shard's channel: %v, want an error naming shard 1", err)
	}
	if _, _, err := sub.History(call(), down, engine.HistoryRequest{Limit: -1}); err == nil {
		t.Errorf("History of the stopped shard's channel succeeded")
	}
	for i := range 5 {
		data := `"during ` + strconv.Itoa(i) + `"`
		if _, err := pub.Publish(call(), up, &engine.Publication{Data: []byte(data)}, hist); err != nil {
			t.Fatalf("Publish to the live shard's channel while the other is down: %v", err)
		}
		subRec.await(t, up, data)
	}
	if pubs, _, err := sub.History(call(), up, engine.HistoryRequest{Limit: -1}); err != nil || len(pubs) != 6 {
		t.Fatalf("History of the live shard's channel: %d publications, %v; want 6", len(pubs), err)
	}
	other := channelOn(t, 2, 0, "other")
	if err := sub.Subscribe(call(), other); err != nil {
		t.Fatalf("Subscribe to a new channel of the live shard: %v", err)
	}
	if err := sub.AddPresence(call(), other, &engine.ClientInfo{User: "u", Client: "c"}, time.Minute); err != nil {
		t.Fatalf("AddPresence on the live shard: %v", err)
	}
	if err := pub.PublishControl(call(), []byte("ping"), ""); err != nil {
		t.Fatalf("PublishControl (shard 0) while shard 1 is down: %v", err)
	}

	b.start()
	// The shard's engine reconnects on its own; publishing fails until it
	// has, and the subscription is restored with it.
	var err error
	testenv.Eventually(t, "publish to the restarted shard", 15*time.Second, func() bool {
		_, err = pub.Publish(call(), down, &engine.Publication{Data: []byte(`"after"`)}, hist)
		return err == nil
	})
	// The subscriber's connection to the shard may come back after the
	// publisher's: publish until a publication reaches it.
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		data := `"after ` + strconv.Itoa(i) + `"`
		if _, err := pub.Publish(call(), down, &engine.Publication{Data: []byte(data)}, hist); err != nil {
			t.Fatalf("Publish after recovery: %v", err)
		}
		select {
		case got := <-subRec.ch(down):
			if strings.HasPrefix(got, `"after`) {
				return
			}
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no publication to the restarted shard's channel reached the subscriber within 15s")
		}
	}
}
