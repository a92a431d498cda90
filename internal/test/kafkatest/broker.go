// Package kafkatest runs an Apache Kafka broker of a test's own, for the
// tests of the Kafka consumer (consumer) and of the Kafka channel state
// output (stateoutput), which both need a real broker and one they may
// stop.
package kafkatest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/test/testenv"
)

// LibsVar names the directory of the broker's jars: kafka_2.13 and its
// dependencies, which scripts/test.sh's install_kafka fetches from Maven
// Central into .tmp/kafka-<version>/libs. Without it the test is skipped.
const LibsVar = "HERALD_TEST_KAFKA_LIBS"

// Broker is a Kafka broker in KRaft mode (broker and controller in one
// process), run with java until the test ends. Topics are created on
// first use with 3 partitions.
type Broker struct {
	// Addr is the broker's host:port, on loopback.
	Addr  string
	props string
	libs  string
	java  string
	cmd   *exec.Cmd
	port  int
}

// Start formats a fresh storage directory and starts a broker on it.
func Start(t testing.TB) *Broker {
	t.Helper()
	libs := testenv.Require(t, LibsVar)
	b := &Broker{libs: libs, java: testenv.Binary(t, "java"), port: testenv.FreePort(t)}
	b.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port))
	dir := t.TempDir()
	controller := testenv.FreePort(t)
	b.props = filepath.Join(dir, "server.properties")
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[2]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=%[3]s
num.partitions=3
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
`, b.port, controller, filepath.Join(dir, "data"))
	if err := os.WriteFile(b.props, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	format := exec.CommandContext(ctx, b.java, "-Xmx256m", "-cp", filepath.Join(libs, "*"), "kafka.tools.StorageTool",
		"format", "-t", "aGVyYWxkLXRlc3QtY2x1cw", "-c", b.props)
	if out, err := format.CombinedOutput(); err != nil {
		t.Fatalf("format the Kafka storage: %v\n%s", err, out)
	}
	b.Restart(t)
	return b
}

// Restart starts the broker's process again on the same storage (after
// Stop), and waits until it accepts connections.
func (b *Broker) Restart(t testing.TB) {
	t.Helper()
	b.cmd = exec.Command(b.java, "-Xmx512m", "-XX:+UseSerialGC", "-cp", filepath.Join(b.libs, "*"), "kafka.Kafka", b.props)
	testenv.StartProcess(t, b.cmd).WaitListening(t, b.port, time.Minute)
}

// Stop interrupts the broker (it shuts down cleanly) and waits until it
// no longer accepts connections. No event marks the port closed to
// another process, so it polls.
func (b *Broker) Stop(t testing.TB) {
	t.Helper()
	if err := b.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the Kafka broker on "+b.Addr+" stopped", 30*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", b.Addr, 100*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		return err != nil
	})
}
