package consumer_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/consumer"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// jsServer is a nats-server with JetStream of the test's own: the shared
// test server runs without JetStream.
type jsServer struct {
	url  string
	port int
	dir  string
	cmd  *exec.Cmd
	nc   *nats.Conn
	js   jetstream.JetStream
}

func startJetStream(t *testing.T) *jsServer {
	t.Helper()
	s := &jsServer{port: testenv.FreePort(t), dir: t.TempDir()}
	s.url = "nats://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	s.start(t)
	nc, err := nats.Connect(s.url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	s.nc = nc
	if s.js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, st := range []jetstream.StreamConfig{
		{Name: "COMMANDS", Subjects: []string{"commands.>"}},
		{Name: "DEAD", Subjects: []string{"dead"}},
	} {
		if _, err := s.js.CreateStream(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *jsServer) start(t *testing.T) {
	t.Helper()
	bin := testenv.Binary(t, "nats-server")
	s.cmd = exec.Command(bin, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(s.port), "-sd", s.dir)
	testenv.StartProcess(t, s.cmd).WaitListening(t, s.port, 10*time.Second)
}

// write publishes a command as Centrifugo's producers do: the method in
// the centrifugo-method header, or the envelope when method is "".
func (s *jsServer) write(t *testing.T, subject, method, payload string) {
	t.Helper()
	m := nats.NewMsg(subject)
	if method != "" {
		m.Header.Set("centrifugo-method", method)
	}
	m.Data = []byte(payload)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.js.PublishMsg(ctx, m); err != nil {
		t.Error(err)
	}
}

func (s *jsServer) config(name, url string, maxAckPending int) consumer.Config {
	if url == "" {
		url = s.url
	}
	return consumer.Config{Name: name, Type: consumer.TypeJetStream,
		Retry: consumer.Retry{MaxRetries: 2, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
		JetStream: consumer.JetStreamConfig{
			URL: url, StreamName: "COMMANDS", Subjects: []string{"commands.>"}, DurableConsumerName: "herald",
			DeliverPolicy: "all", MaxAckPending: maxAckPending, AckWait: time.Second, DeadLetterSubject: "dead",
		}}
}

// TestJetStreamDuplicatesOnce: duplicates (same idempotency key), in the
// header form and the envelope form, reach the subscriber once, in order.
func TestJetStreamDuplicatesOnce(t *testing.T) {
	s := startJetStream(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	g := runGroup(t, s.config("js", "", 0), n.exec, "a")
	for i := 1; i <= 30; i++ {
		cmd := publishCmd("news", i, "k"+strconv.Itoa(i))
		s.write(t, "commands.a", "publish", cmd)
		s.write(t, "commands.a", "", `{"method":"publish","payload":`+cmd+`}`)
	}
	equal(t, sub.waitFor(t, 30, 10*time.Second), nums(30))
	eventually(t, 5*time.Second, "every message applied", func() bool {
		return counter(t, g, "herald_consumer_applied_total", "js") == 60
	})
	sub.settle(t, 30, 200*time.Millisecond)
}

// TestJetStreamOrderTwoNodes: two nodes share the durable consumer with
// max_ack_pending 1; three producers write at once; every subject's
// publications arrive complete and in order, each applied once.
func TestJetStreamOrderTwoNodes(t *testing.T) {
	s := startJetStream(t)
	n := startNode(t)
	const parts, each = 3, 40
	subs := make([]*subscriber, parts)
	for p := range parts {
		subs[p] = subscribe(t, n.hub, "p"+strconv.Itoa(p))
	}
	ga := runGroup(t, s.config("js", "", 1), n.exec, "a")
	gb := runGroup(t, s.config("js", "", 1), n.exec, "b")
	orderedTwoGroups(t, subs, each, "js", [2]*consumer.Group{ga, gb}, 30*time.Second, func(p, i int) {
		s.write(t, "commands.p"+strconv.Itoa(p), "publish", publishCmd("p"+strconv.Itoa(p), i, ""))
	})
}

// TestJetStreamNodeKilledMidBatch: node a loses the network while applying
// a message; after ack_wait JetStream delivers what a left unacknowledged
// to node b. Nothing is lost; with idempotency keys nothing reaches the
// subscriber twice.
func TestJetStreamNodeKilledMidBatch(t *testing.T) {
	s := startJetStream(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	proxy := testenv.NewProxy(t, strings.TrimPrefix(s.url, "nats://"))
	for i := 1; i <= 40; i++ {
		s.write(t, "commands.a", "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	xa, stuck := hangAt(n.exec, 10)
	ga := runGroup(t, s.config("js", "nats://"+proxy.Addr(), 1), xa, "a")
	await(t, stuck, "node a applying its 10th command")
	proxy.Blackhole()
	gb := runGroup(t, s.config("js", "", 1), n.exec, "b")
	equal(t, sub.waitFor(t, 40, 20*time.Second), nums(40))
	stopGroup(t, ga)
	sub.settle(t, 40, 200*time.Millisecond)
	if got := counter(t, gb, "herald_consumer_applied_total", "js"); got < 31 {
		t.Fatalf("node b applied %v, want at least the 31 node a did not", got)
	}
}

// TestJetStreamPoisonMessages: an unknown method, a message that is not a
// command and a command that keeps failing are terminated and published
// to the dead-letter subject with the error; the stream goes on.
func TestJetStreamPoisonMessages(t *testing.T) {
	s := startJetStream(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	x := &hookExec{next: n.exec}
	x.set(func(_ context.Context, _ string, body []byte) error {
		if string(body) == publishCmd("news", 3, "") {
			return &api.Error{Code: 100, Message: "internal server error"}
		}
		return nil
	})
	g := runGroup(t, s.config("js", "", 0), x, "a")
	s.write(t, "commands.a", "publish", publishCmd("news", 1, ""))
	s.write(t, "commands.a", "no_such_method", `{}`)
	s.write(t, "commands.a", "", `not a command`)
	s.write(t, "commands.a", "publish", publishCmd("news", 3, ""))
	s.write(t, "commands.a", "publish", publishCmd("news", 2, ""))
	equal(t, sub.waitFor(t, 2, 10*time.Second), []string{`{"n":1}`, `{"n":2}`})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dead, err := s.js.Stream(ctx, "DEAD")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "three messages moved aside", func() bool {
		info, err := dead.Info(ctx)
		return err == nil && info.State.Msgs == 3
	})
	for i, want := range []string{"104", "malformed", "100"} {
		m, err := dead.GetMsg(ctx, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if e := m.Header.Get("Herald-Error"); !strings.Contains(e, want) {
			t.Errorf("dead letter %d: Herald-Error %q, want it to say %s", i, e, want)
		}
	}
	if f, r := counter(t, g, "herald_consumer_failed_total", "js"), counter(t, g, "herald_consumer_retried_total", "js"); f != 3 || r != 2 {
		t.Fatalf("failed %v retried %v, want 3 and 2", f, r)
	}
}

// TestJetStreamServerRestart: nats-server restarts (same store) under a
// running consumer; the consumer reconnects and applies what was written
// before and after.
func TestJetStreamServerRestart(t *testing.T) {
	s := startJetStream(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	g := runGroup(t, s.config("js", "", 0), n.exec, "a")
	for i := 1; i <= 5; i++ {
		s.write(t, "commands.a", "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	sub.waitFor(t, 5, 10*time.Second)
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(s.url, "nats://")
	eventually(t, 10*time.Second, "nats-server stopped", func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	s.start(t)
	for i := 6; i <= 10; i++ {
		s.write(t, "commands.a", "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	equal(t, sub.waitFor(t, 10, 30*time.Second), nums(10))
	eventually(t, 10*time.Second, "healthy", func() bool { return g.Health()["js"] == "" })
	sub.settle(t, 10, 200*time.Millisecond)
}

// TestJetStreamStopAcknowledgesApplied: a node stopped in the middle of a
// batch acknowledges exactly what it applied and gives the rest back
// (Nak), so that the next node applies it at once, not after ack_wait; with
// max_ack_pending 1, in order. (With more, JetStream redelivers the
// messages given back after those never delivered: order is only kept
// with 1, as docs/consumers.md says.)
func TestJetStreamStopAcknowledgesApplied(t *testing.T) {
	s := startJetStream(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	for i := 1; i <= 20; i++ {
		s.write(t, "commands.a", "publish", publishCmd("news", i, ""))
	}
	x, stuck := hangAt(n.exec, 6)
	cfg := s.config("js", "", 1)
	cfg.JetStream.AckWait = time.Minute // only a Nak brings the rest back in time
	g := runGroup(t, cfg, x, "a")
	await(t, stuck, "node a applying its 6th command")
	stopGroup(t, g)
	equal(t, sub.waitFor(t, 5, time.Second), nums(5))
	runGroup(t, cfg, n.exec, "b")
	equal(t, sub.waitFor(t, 20, 10*time.Second), nums(20))
	sub.settle(t, 20, 200*time.Millisecond)
}
