package consumer_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/consumer"
	"github.com/heraldhq/herald/internal/test/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaBroker is a broker of the test's own (kafkatest); addr alone
// names one a node process of TestKafkaNodeKilledMidBatch is given.
type kafkaBroker struct {
	*kafkatest.Broker
	addr string
}

func startKafka(t *testing.T) *kafkaBroker {
	t.Helper()
	k := kafkatest.Start(t)
	return &kafkaBroker{Broker: k, addr: k.Addr}
}

// producer writes records as Centrifugo's producers do.
func (b *kafkaBroker) producer(t *testing.T) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.AllowAutoTopicCreation(), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// write produces one command with key: the method in the
// centrifugo-method header, or the envelope when method is "".
func write(t *testing.T, cl *kgo.Client, topic, key, method, payload string) {
	t.Helper()
	r := &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(payload)}
	if method != "" {
		r.Headers = []kgo.RecordHeader{{Key: "centrifugo-method", Value: []byte(method)}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Error(err)
	}
}

func (b *kafkaBroker) config(name string) consumer.Config {
	return consumer.Config{Name: name, Type: consumer.TypeKafka,
		Retry: consumer.Retry{MaxRetries: 2, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
		Kafka: consumer.KafkaConfig{
			Brokers: []string{b.addr}, Topics: []string{"commands"}, ConsumerGroup: "herald",
			FetchMaxWait: 100 * time.Millisecond, DeadLetterTopic: "commands_dead",
			SessionTimeout: 6 * time.Second, RebalanceTimeout: 5 * time.Second,
		}}
}

// TestKafkaDuplicatesOnce: duplicates (same idempotency key), in the
// header form and the envelope form, reach the subscriber once, in order.
func TestKafkaDuplicatesOnce(t *testing.T) {
	b := startKafka(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	p := b.producer(t)
	g := runGroup(t, b.config("kafka"), n.exec, "a")
	for i := 1; i <= 30; i++ {
		cmd := publishCmd("news", i, "k"+strconv.Itoa(i))
		write(t, p, "commands", "news", "publish", cmd)
		write(t, p, "commands", "news", "", `{"method":"publish","payload":`+cmd+`}`)
	}
	equal(t, sub.waitFor(t, 30, 60*time.Second), nums(30))
	eventually(t, 10*time.Second, "every record applied", func() bool {
		return counter(t, g, "herald_consumer_applied_total", "kafka") == 60
	})
	sub.settle(t, 30, 200*time.Millisecond)
}

// TestKafkaOrderTwoNodes: two nodes in one consumer group, three keys
// written at once; each key's publications arrive complete and in order,
// each applied once.
func TestKafkaOrderTwoNodes(t *testing.T) {
	b := startKafka(t)
	n := startNode(t)
	const parts, each = 3, 40
	subs := make([]*subscriber, parts)
	for p := range parts {
		subs[p] = subscribe(t, n.hub, "p"+strconv.Itoa(p))
	}
	prod := b.producer(t)
	write(t, prod, "commands", "p0", "publish", publishCmd("p0", 1, "")) // creates the topic
	ga := runGroup(t, b.config("kafka"), n.exec, "a")
	gb := runGroup(t, b.config("kafka"), n.exec, "b")
	orderedTwoGroups(t, subs, each, "kafka", [2]*consumer.Group{ga, gb}, 60*time.Second, func(p, i int) {
		if p == 0 && i == 1 {
			return // written above, to create the topic
		}
		write(t, prod, "commands", "p"+strconv.Itoa(p), "publish", publishCmd("p"+strconv.Itoa(p), i, ""))
	})
}

// TestKafkaPoisonMessages: an unknown method, a record that is not a
// command and a command that keeps failing go to the dead-letter topic
// with the error; the partition goes on.
func TestKafkaPoisonMessages(t *testing.T) {
	b := startKafka(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	x := &hookExec{next: n.exec}
	x.set(func(_ context.Context, _ string, body []byte) error {
		if string(body) == publishCmd("news", 3, "") {
			return &api.Error{Code: 100, Message: "internal server error"}
		}
		return nil
	})
	p := b.producer(t)
	g := runGroup(t, b.config("kafka"), x, "a")
	write(t, p, "commands", "k", "publish", publishCmd("news", 1, ""))
	write(t, p, "commands", "k", "no_such_method", `{}`)
	write(t, p, "commands", "k", "", `not a command`)
	write(t, p, "commands", "k", "publish", publishCmd("news", 3, ""))
	write(t, p, "commands", "k", "publish", publishCmd("news", 2, ""))
	equal(t, sub.waitFor(t, 2, 60*time.Second), []string{`{"n":1}`, `{"n":2}`})
	dead, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.ConsumeTopics("commands_dead"))
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	var errs []string
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(errs) < 3 && ctx.Err() == nil {
		dead.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			for _, h := range r.Headers {
				if h.Key == "herald-error" {
					errs = append(errs, string(h.Value))
				}
			}
		})
	}
	if len(errs) != 3 || !strings.Contains(errs[0], "104") || !strings.Contains(errs[1], "malformed") || !strings.Contains(errs[2], "100") {
		t.Fatalf("dead letters %q: want the unknown method (104), the malformed record, the failing command (100)", errs)
	}
	if f, r := counter(t, g, "herald_consumer_failed_total", "kafka"), counter(t, g, "herald_consumer_retried_total", "kafka"); f != 3 || r != 2 {
		t.Fatalf("failed %v retried %v, want 3 and 2", f, r)
	}
}

// TestKafkaBrokerRestart: the broker restarts under a running consumer;
// the consumer reconnects and applies what was written before and after.
func TestKafkaBrokerRestart(t *testing.T) {
	b := startKafka(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	p := b.producer(t)
	g := runGroup(t, b.config("kafka"), n.exec, "a")
	for i := 1; i <= 5; i++ {
		write(t, p, "commands", "news", "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	sub.waitFor(t, 5, 60*time.Second)
	b.Stop(t)
	b.Restart(t)
	for i := 6; i <= 10; i++ {
		write(t, p, "commands", "news", "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	equal(t, sub.waitFor(t, 10, 60*time.Second), nums(10))
	eventually(t, 10*time.Second, "healthy", func() bool { return g.Health()["kafka"] == "" })
	sub.settle(t, 10, 200*time.Millisecond)
}

// kafkaNodeVar makes the test binary a Kafka consumer node of
// TestKafkaNodeKilledMidBatch: it applies up to its 10th command, says so
// on stdout, and hangs until it is killed.
const kafkaNodeVar = "HERALD_TEST_KAFKA_NODE"

// TestKafkaNodeKilledMidBatch: a node process is killed (SIGKILL) while
// applying a record of a batch it has half applied and not committed; the
// other node gets the partitions after the session timeout and applies
// the batch from the last commit. Nothing is lost.
func TestKafkaNodeKilledMidBatch(t *testing.T) {
	if broker := os.Getenv(kafkaNodeVar); broker != "" {
		kafkaNode(t, broker)
		return
	}
	b := startKafka(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	p := b.producer(t)
	for i := 1; i <= 40; i++ {
		write(t, p, "commands", "news", "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	node := exec.Command(self, "-test.run=^TestKafkaNodeKilledMidBatch$", "-test.timeout=5m")
	node.Env = append(os.Environ(), kafkaNodeVar+"="+b.addr)
	out, err := node.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	node.Stderr = os.Stderr
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = node.Process.Kill(); _ = node.Wait() }()
	stuck := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "stuck" {
				close(stuck)
			}
		}
	}()
	await(t, stuck, "the node process applying its 10th command")
	gb := runGroup(t, b.config("kafka"), n.exec, "b")
	if err := node.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	equal(t, sub.waitFor(t, 40, 60*time.Second), nums(40))
	sub.settle(t, 40, 200*time.Millisecond)
	if got := counter(t, gb, "herald_consumer_applied_total", "kafka"); got != 40 {
		t.Fatalf("node b applied %v, want all 40 (the killed node committed none)", got)
	}
}

func kafkaNode(t *testing.T, broker string) {
	n := startNode(t)
	x, stuck := hangAt(n.exec, 10)
	go func() {
		<-stuck
		fmt.Println("stuck")
	}()
	b := &kafkaBroker{addr: broker}
	runGroup(t, b.config("kafka"), x, "a")
	time.Sleep(5 * time.Minute) // until killed
}
