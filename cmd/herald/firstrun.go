package main

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/server"
)

// The first run: with no keys configured, `herald serve` makes up keys
// for the run and prints everything needed to try it, so the first command
// a newcomer types gives a server that accepts a connection and a publish.
const (
	demoUser    = "demo"
	demoChannel = "demo"
	// demoTokenTTL is long enough for an afternoon of trying things; the
	// keys die with the process anyway.
	demoTokenTTL = 24 * time.Hour
)

// demoToken mints a connection token for the demo user whose channels
// claim subscribes it to the demo channel on connect (a server-side
// subscription), so the demo works without a channel configuration that
// lets clients subscribe themselves.
func demoToken(secret string, now time.Time) (string, error) {
	s, err := auth.NewHMACSigner(secret, "HS256")
	if err != nil {
		return "", fmt.Errorf("demo token: %w", err)
	}
	tok, err := s.ConnectToken(auth.ConnectClaims{
		User: demoUser, ExpiresAt: now.Add(demoTokenTTL), Channels: []string{demoChannel},
	})
	if err != nil {
		return "", fmt.Errorf("demo token: %w", err)
	}
	return tok, nil
}

// reachableHost turns a listen address into one a local client can dial:
// an unspecified host (":8000", "0.0.0.0", "::") becomes localhost.
func reachableHost(listenAddr string) string {
	host, port, err := net.SplitHostPort(listenAddr)
	if err != nil {
		return listenAddr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// firstRunBanner is the text printed at start when the keys were
// generated: the keys, a token, a publish command and a client snippet
// that all work against this very process.
func firstRunBanner(keys generatedKeys, token, listenAddr string) string {
	hostPort := reachableHost(listenAddr)
	httpURL := "http://" + hostPort
	wsURL := "ws://" + hostPort + server.WebSocketPath
	rule := strings.Repeat("=", 78)
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("")
	p("%s", rule)
	p("Herald is running with keys generated for this run only.")
	p("No client.token key and no http_api.key are configured, so these random keys")
	p("work until the process exits; the next start makes new ones.")
	p("%s", rule)
	p("")
	p("  HMAC secret (client.token.hmac_secret_key): %s", keys.HMACSecret)
	p("  API key (http_api.key):                     %s", keys.APIKey)
	p("")
	p("Connection token for user %q, valid for %d hours. Its channels claim subscribes", demoUser, int(demoTokenTTL.Hours()))
	p("the connection to channel %q on connect (a server-side subscription), so no", demoChannel)
	p("channel configuration is needed:")
	p("")
	p("  %s", token)
	p("")
	p("Publish to channel %q:", demoChannel)
	p("")
	p("  curl -sS -X POST %s/api/publish -H 'X-API-Key: %s' -H 'Content-Type: application/json' -d '{\"channel\":\"%s\",\"data\":{\"text\":\"hello\"}}'", httpURL, keys.APIKey, demoChannel)
	p("")
	p("Receive it with centrifuge-js in Node 20: save as demo.mjs, then run")
	p("npm install centrifuge ws && node demo.mjs")
	p("")
	p("  import { Centrifuge } from 'centrifuge';")
	p("  import WebSocket from 'ws';")
	p("")
	p("  const client = new Centrifuge('%s', {", wsURL)
	p("    token: '%s',", token)
	p("    websocket: WebSocket,")
	p("  });")
	p("  client.on('connected', (ctx) => console.log('connected as', ctx.client));")
	p("  // Publications on server-side subscriptions arrive on the client itself.")
	p("  client.on('publication', (ctx) => console.log(ctx.channel, ctx.data));")
	p("  client.connect();")
	p("")
	p("To keep keys across restarts: herald config init   (writes herald.yaml)")
	p("                         then: herald serve --config herald.yaml")
	p("%s", rule)
	p("")
	return b.String()
}
