package main

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
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

// loopbackWhenUnset is the address a first run listens on: with keys
// generated for the run (and printed to the terminal) and no address chosen
// by a flag, the environment or a config file, the node is a try-out on this
// machine, so it listens on loopback only instead of every interface.
func loopbackWhenUnset(addr string, chosen bool) string {
	if chosen {
		return addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// addressChosen reports whether the user chose where to listen: with the
// --address flag, HERALD_ADDRESS, or an address other than the default in
// the config file (a file that spells out the default cannot be told from
// one that does not mention it, and gets loopback like no file).
func addressChosen(cfg config.Config, configPath string, flagSet bool, lookupEnv func(string) (string, bool)) bool {
	_, inEnv := lookupEnv(config.EnvName("address"))
	return flagSet || inEnv || configPath != "" && cfg.Address != config.Default().Address
}

// herald is how the user ran this binary, so the commands the banner prints
// work as pasted: a binary built by `go run` lives in a temporary go-build
// directory and is gone after the run, so the way to run it again is `go run`
// again; a binary run by path is run by that path; otherwise it is on PATH.
func heraldCommand(executable, arg0 string) string {
	// Either separator, whatever the OS the test runs on.
	slashed := func(p string) string { return strings.ReplaceAll(p, `\`, "/") }
	if strings.Contains(slashed(executable), "/go-build") {
		return "go run ./cmd/herald"
	}
	if strings.ContainsRune(slashed(arg0), '/') {
		return arg0
	}
	return "herald"
}

// firstRunBanner is the text printed at start when the keys were
// generated: the keys, a token, a client snippet and then a publish command
// (in that order, so a user following it top to bottom has the client
// listening before the publication is sent), all working against this very
// process; and how to keep the keys and open the node to other machines.
// secure is whether the listener serves TLS: then the URLs are https and
// wss. paths are the configured endpoints (websocket.handler_prefix,
// http_api.handler_prefix).
func firstRunBanner(keys generatedKeys, token, listenAddr string, paths config.Paths, herald string, secure bool) string {
	hostPort := reachableHost(listenAddr)
	httpURL, wsURL := "http://"+hostPort, "ws://"+hostPort+paths.WebSocket
	if secure {
		httpURL, wsURL = "https://"+hostPort, "wss://"+hostPort+paths.WebSocket
	}
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
	p("1. Receive with centrifuge-js in Node 20: save as demo.mjs, then run")
	p("   npm install centrifuge ws && node demo.mjs   (leave it running)")
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
	p("2. Once it prints \"connected as\", publish to channel %q from another terminal:", demoChannel)
	p("")
	p("  curl -sS -X POST %s%s/publish -H 'X-API-Key: %s' -H 'Content-Type: application/json' -d '{\"channel\":\"%s\",\"data\":{\"text\":\"hello\"}}'", httpURL, paths.API, keys.APIKey, demoChannel)
	p("")
	p("Listening on %s. With no address configured, a run with generated keys", listenAddr)
	p("listens on loopback only; to accept other machines, pass --address :8000")
	p("(or set address in the config file, or HERALD_ADDRESS).")
	p("")
	p("To keep keys across restarts: %s config init   (writes herald.yaml)", herald)
	p("                         then: %s serve --config herald.yaml", herald)
	p("%s", rule)
	p("")
	return b.String()
}
