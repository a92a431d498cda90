//go:build linux

// Command client is the client half of the wsmem harness. It opens -n
// WebSocket connections to the server (a separate process, because one
// process may hold at most 20,000 open files here), sends one small text
// message on each and waits for its echo, leaves them idle, then asks the
// server for its memory report and prints it.
//
// The harness is Linux only: it reads RSS from /proc, and its candidates
// include epoll servers.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
)

func main() {
	addr := flag.String("addr", "", "server address host:port (loopback)")
	n := flag.Int("n", 19000, "connections to hold")
	par := flag.Int("par", 64, "concurrent dials")
	settle := flag.Duration("settle", 3*time.Second, "idle time before the report")
	timeout := flag.Duration("timeout", 3*time.Minute, "give up after this long")
	mode := flag.String("mode", "echo", "echo: expect the message back; hub: speak the client protocol (server -lib hub)")
	flag.Parse()
	hubMode = *mode == "hub"
	if *addr == "" {
		log.Fatal("-addr is required")
	}
	if err := raiseNoFile(*n); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	conns, err := dialAll(ctx, *addr, *n, *par)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if err != nil {
		log.Fatalf("after %d connections: %v", len(conns), err)
	}
	select {
	case <-time.After(*settle):
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	if err := printStats(ctx, *addr); err != nil {
		log.Fatal(err)
	}
}

// dialAll opens n connections, each echoing one message, par at a time.
func dialAll(ctx context.Context, addr string, n, par int) ([]net.Conn, error) {
	var (
		mu    sync.Mutex
		conns = make([]net.Conn, 0, n)
		next  atomic.Int64
		first error
		wg    sync.WaitGroup
	)
	dialer := ws.Dialer{Timeout: 10 * time.Second}
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				c, err := dialOne(ctx, dialer, addr)
				mu.Lock()
				if err != nil {
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first == nil && len(conns) < n {
		first = fmt.Errorf("only %d of %d connections: %w", len(conns), n, ctx.Err())
	}
	return conns, first
}

// hubMode makes each connection connect and subscribe instead of echo.
var hubMode bool

func dialOne(ctx context.Context, d ws.Dialer, addr string) (net.Conn, error) {
	c, br, _, err := d.Dial(ctx, "ws://"+addr+"/ws")
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	if br != nil {
		ws.PutReader(br)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	msg := []byte(`{"id":1,"subscribe":{"channel":"news"}}`)
	if hubMode {
		// The real protocol: connect anonymously and subscribe, in one frame.
		msg = []byte(`{"id":1,"connect":{}}` + "\n" + `{"id":2,"subscribe":{"channel":"news"}}`)
	}
	// One write per frame: the gobwas-epoll prototype reads whole frames only.
	frame, err := ws.CompileFrame(ws.MaskFrame(ws.NewTextFrame(msg)))
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("compile frame: %w", err)
	}
	if _, err := c.Write(frame); err != nil {
		c.Close()
		return nil, fmt.Errorf("write: %w", err)
	}
	got, err := wsutil.ReadServerText(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("read echo: %w", err)
	}
	if hubMode {
		if !bytes.Contains(got, []byte(`"id":2,"subscribe"`)) {
			c.Close()
			return nil, fmt.Errorf("subscribe failed: %s", got)
		}
	} else if string(got) != string(msg) {
		c.Close()
		return nil, errors.New("echo differs")
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

func printStats(ctx context.Context, addr string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/stats", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	defer resp.Body.Close()
	_, err = io.Copy(os.Stdout, resp.Body)
	return err
}

// raiseNoFile lifts the soft open-file limit to the hard one and says so
// plainly when n connections cannot fit in this process.
func raiseNoFile(n int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("setrlimit: %w", err)
	}
	if uint64(n)+64 > lim.Max {
		return fmt.Errorf("%d connections need more than the open-file hard limit %d of one process: run several clients", n, lim.Max)
	}
	return nil
}
