package testenv

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Binary returns the path of the program name (redis-server, nats-server,
// ...), which a test runs itself when it needs a server configured in a
// way the shared services are not, with TLS say. Without it the test is
// skipped, or fails under HERALD_TEST_REQUIRE_SERVICES=1.
func Binary(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(RequireServices) == "1" {
			t.Fatalf("%s is not installed and %s=1: %v", name, RequireServices, err)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}

// FreePort returns a loopback TCP port that was free a moment ago, for a
// server that takes its port on the command line.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Process is a server program a test started.
type Process struct {
	cmd  *exec.Cmd
	out  *LockedBuffer
	done chan struct{}
}

// StartProcess runs cmd until t ends, then interrupts it (servers shut
// down cleanly on SIGINT: PostgreSQL stops its child processes), kills it
// if it has not exited within 10 seconds, and waits for it. Its output is
// shown if the test fails, so that a server that refused its
// configuration explains itself.
func StartProcess(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{cmd: cmd, out: &LockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if cmd.Process.Signal(os.Interrupt) == nil {
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
			}
		}
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("output of %s:\n%s", cmd.Path, p.out.String())
		}
	})
	return p
}

// WaitListening waits until the process accepts TCP connections on
// 127.0.0.1:port, and fails the test if it exits or takes longer than
// timeout. No event marks a server being ready, so it polls.
func (p *Process) WaitListening(t testing.TB, port int, timeout time.Duration) string {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return addr
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before listening on %s:\n%s", p.cmd.Path, addr, p.out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s within %v:\n%s", p.cmd.Path, addr, timeout, p.out.String())
		}
	}
}
