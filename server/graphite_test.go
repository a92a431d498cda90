package server

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
)

// With graphite.enabled the node pushes its metrics to a Graphite server
// (a loopback listener here) as plaintext lines under prefix.node.
func TestGraphitePush(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lines := make(chan string, 1024)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				sc := bufio.NewScanner(conn)
				for sc.Scan() {
					select {
					case lines <- sc.Text():
					default:
					}
				}
			}()
		}
	}()
	cfg := config.Default()
	cfg.Name = "node.one"
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	cfg.Graphite = config.GraphiteConfig{Enabled: true, Host: host, Prefix: "hq.", Interval: 20 * time.Millisecond}
	cfg.Graphite.Port, _ = strconv.Atoi(port)
	s := startServer(t, cfg)
	defer shutdownServer(t, s)

	deadline := time.After(10 * time.Second)
	for {
		select {
		case l := <-lines:
			// "hq.node_one.herald_..." then a value and a Unix time.
			f := strings.Fields(l)
			if len(f) == 3 && strings.HasPrefix(f[0], "hq.node_one.herald_") {
				return
			}
			if !strings.HasPrefix(l, "hq.node_one.") {
				t.Fatalf("line outside the prefix: %q", l)
			}
		case <-deadline:
			t.Fatal("no herald_ metric line pushed")
		}
	}
}
