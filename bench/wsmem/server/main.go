//go:build linux

// Command server is the server half of the wsmem harness: it holds idle
// WebSocket connections with one of several libraries and reports how much
// RSS and Go heap each connection costs. See ../RESULTS.md.
//
// The harness is Linux only: it reads RSS from /proc, and its candidates
// include epoll servers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// echoServer is one candidate library: it answers each data message with the
// same message and counts connections that are open.
type echoServer interface {
	http.Handler
	// Shutdown stops the library's own machinery, if it has any.
	Shutdown()
}

func main() {
	lib := flag.String("lib", "gorilla", "library: gorilla, coder, gws, gobwas-epoll, herald, hub (the whole Herald path: use client -mode hub)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	maxLife := flag.Duration("max-life", 10*time.Minute, "exit after this long whatever happens")
	flag.Parse()

	if err := raiseNoFile(); err != nil {
		log.Fatalf("raise RLIMIT_NOFILE: %v", err)
	}
	var open atomic.Int64
	srv, err := newEchoServer(*lib, &open)
	if err != nil {
		log.Fatalf("lib %q: %v", *lib, err)
	}
	base := takeSample(0)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("listen %s: %v", *addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ws", srv)
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		writeStats(w, *lib, base, takeSample(open.Load()))
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// The client waits for this line before it dials.
	fmt.Printf("listening %s\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(*maxLife):
			log.Printf("max-life %s reached", *maxLife)
		}
		srv.Shutdown()
		_ = hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("serve: %v", err)
	}
}

func newEchoServer(lib string, open *atomic.Int64) (echoServer, error) {
	switch lib {
	case "gorilla":
		return newGorilla(open), nil
	case "coder":
		return newCoder(open), nil
	case "gws":
		return newGWS(open), nil
	case "gobwas-epoll":
		return newGobwasEpoll(open)
	case "hub":
		return newHub(open)
	case "herald":
		return newHerald(open)
	}
	return nil, fmt.Errorf("unknown library")
}

// raiseNoFile lifts the soft open-file limit to the hard one; the hard limit
// (20,000 here) cannot be raised, which is why client and server are
// separate processes.
func raiseNoFile() error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	lim.Cur = lim.Max
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}
