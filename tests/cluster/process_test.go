package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// proc is a program the test started, with its output kept in a file that
// the test prints when it fails.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed once the process has exited
	err  error         // its exit status, once done is closed
}

// startProc starts bin with args and env added to the test's environment;
// t's cleanup kills it if it is still running.
func startProc(t *testing.T, name, bin string, args, env []string) *proc {
	t.Helper()
	log := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			out, _ := os.ReadFile(log)
			t.Logf("--- output of %s:\n%s", name, out)
		}
	})
	return p
}

// stop sends sig and waits up to limit for the process to exit,
// returning its exit status.
func (p *proc) stop(t *testing.T, sig syscall.Signal, limit time.Duration) error {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("signal %s: %v", p.name, err)
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(limit):
		t.Fatalf("%s did not exit within %s of %s", p.name, limit, sig)
		return nil
	}
}

// awaitHTTP polls url until it answers want, or the process exits, or
// limit passes (polling is the only way to see a port open from outside).
func awaitHTTP(t *testing.T, p *proc, url string, want int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: time.Second}
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before %s answered %d", p.name, p.err, url, want)
		default:
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not answer %d within %s (last: %s)", url, want, limit, last)
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// buildHerald builds cmd/herald into a temporary directory of t's (the build
// cache makes that a link when the code did not change).
func buildHerald(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "herald")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/herald")
	cmd.Dir = repoRoot(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build ./cmd/herald: %v\n%s", err, out.String())
	}
	return bin
}

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
