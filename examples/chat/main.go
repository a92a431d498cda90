// Command chat is a small chat room built on Herald's hub as a library:
// one Go process serves a page, authenticates users by the name they type
// (Handlers.OnConnecting), answers the page's calls (Handlers.OnRPC),
// announces arrivals and departures (Hub.Publish) and shows who is online
// (presence). The page talks to it with centrifuge-js.
//
//	npm install --prefix /tmp/herald-chat centrifuge
//	go run ./examples/chat -centrifuge-js /tmp/herald-chat/node_modules/centrifuge/dist/centrifuge.js
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// getCentrifugeJS tells how to get the bundle the page needs.
const getCentrifugeJS = `the page needs centrifuge-js, which this repository does not include: get it with
    npm install --prefix /tmp/herald-chat centrifuge
and start the chat with
    -centrifuge-js /tmp/herald-chat/node_modules/centrifuge/dist/centrifuge.js
(or set CENTRIFUGE_JS to that path)`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

// run starts the chat and serves until SIGINT or SIGTERM. It prints the
// page's address on stdout once it listens.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("CHAT_ADDR", "127.0.0.1:8080"), "listen address, port 0 for any free port (env CHAT_ADDR)")
	jsPath := fs.String("centrifuge-js", os.Getenv("CENTRIFUGE_JS"), "path of centrifuge-js's dist/centrifuge.js, served to the page (env CENTRIFUGE_JS)")
	lim := defaultLimits()
	fs.IntVar(&lim.maxUnauthenticated, "max-unauthenticated", lim.maxUnauthenticated, "connections that have not sent a name yet; more get 503, and one address may hold a tenth (-1: no bound)")
	fs.Float64Var(&lim.rate, "ip-rate", lim.rate, "new connections a second one address may open; more get 429 (-1: no limit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *jsPath == "" {
		return errors.New(getCentrifugeJS)
	}
	js, err := os.ReadFile(*jsPath)
	if err != nil {
		return fmt.Errorf("read centrifuge-js: %w\n%s", err, getCentrifugeJS)
	}

	log := slog.New(slog.NewTextHandler(stderr, nil))
	s, err := newServer(js, lim, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		_ = s.ws.Close()
		return fmt.Errorf("listen: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := s.start(ctx, ln); err != nil {
		_ = ln.Close()
		return err
	}
	fmt.Fprintf(stdout, "chat: listening on http://%s\n", ln.Addr())

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-s.done:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(serveErr, s.shutdown(shutdownCtx))
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
