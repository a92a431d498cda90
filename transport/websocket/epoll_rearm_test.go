//go:build linux

package websocket

import (
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/internal/test/testenv"
)

// A re-arm that loses the race with the connection's teardown (its fd is
// out of epoll already) is expected while closing: it must not be logged
// as an error, and the connection must still be torn down.
func TestRearmAfterTeardownIsNotAnError(t *testing.T) {
	logs := &logCapture{}
	h := newHarness(t, Config{Poller: PollerEpoll, Logger: slog.New(logs)})
	c, _, s := h.dial("")
	expectEcho(t, c, gorilla.TextMessage, "armed", gorilla.TextMessage)
	conn := s.c
	e := h.srv.path.(*epollPath)

	// What the race does, in the order it does it: the connection is
	// closing and its fd has left epoll, then a late re-arm comes.
	if _, ok := conn.markClosed(); !ok {
		t.Fatal("connection closed already")
	}
	if err := conn.rc.Control(func(fd uintptr) {
		if err := e.poll.del(int(fd)); err != nil {
			t.Errorf("epoll del: %v", err)
		}
	}); err != nil {
		t.Fatalf("control: %v", err)
	}
	e.rearm(conn, nil)
	waitClosed(t, s)

	if errs := logs.matching(slog.LevelWarn, ""); len(errs) > 0 {
		t.Fatalf("logged %q at %v, want nothing above debug", errs[0].Message, errs[0].Level)
	}
	if len(logs.matching(slog.LevelDebug, "websocket epoll re-arm after close")) != 1 {
		t.Fatal("the late re-arm was not logged at debug")
	}
}

// Server.Close while clients keep sending frames races re-arms against
// teardowns; over several rounds nothing may be logged as an error.
func TestCloseWhileClientsSendLogsNoError(t *testing.T) {
	for round := range 5 {
		logs := &logCapture{}
		srv, err := NewServer(Config{Poller: PollerEpoll, Logger: slog.New(logs)}, func(c *Conn, r *http.Request) Receiver {
			return newTestReceiver(c)
		})
		if err != nil {
			t.Fatalf("NewServer: %v", err)
		}
		hs := newLoopbackServer(t, srv)
		url := "ws" + hs.URL[len("http"):]
		var clients sync.WaitGroup
		for range 8 {
			d := gorilla.Dialer{HandshakeTimeout: 5 * time.Second}
			wc, _, err := d.Dial(url, nil)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			clients.Go(func() {
				defer wc.Close()
				// Write until the server's close makes writes fail; reads
				// drain the echoes so that the server never blocks.
				go func() {
					for {
						if _, _, err := wc.ReadMessage(); err != nil {
							return
						}
					}
				}()
				for {
					_ = wc.SetWriteDeadline(time.Now().Add(5 * time.Second))
					if err := wc.WriteMessage(gorilla.TextMessage, []byte("x")); err != nil {
						return
					}
				}
			})
		}
		testenv.Eventually(t, "8 connections", 5*time.Second, func() bool { return srv.NumConns() == 8 })
		if err := srv.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
		clients.Wait()
		hs.Close()
		if errs := logs.matching(slog.LevelError, ""); len(errs) > 0 {
			t.Fatalf("round %d: logged %q (error %s)", round, errs[0].Message, attr(errs[0], "error"))
		}
	}
}
