// Package testenv is how tests find the external services they need
// (PostgreSQL, Redis, NATS), by the convention every package's tests
// share: scripts/services.sh starts the services on loopback and
// `scripts/services.sh env` prints the HERALD_TEST_* variables that name
// them (see "Running the tests" in README.md).
//
// Every test that needs a service gets it through Require, so that a run
// without the service skips such tests while a CI run, which sets
// HERALD_TEST_REQUIRE_SERVICES=1, fails them instead of passing silently:
// the engines' tests (HERALD_TEST_POSTGRES_DSN, HERALD_TEST_REDIS_ADDR,
// HERALD_TEST_NATS_URL, ...), sqlauth's and the server's. A test that needs
// something other than a variable, such as the PostgreSQL failover test
// and its server programs, reads RequireServices to follow the same rule.
package testenv

import (
	"log/slog"
	"os"
	"testing"
)

// RequireServices is the variable that, set to "1", turns a missing
// service variable from a skip into a failure.
const RequireServices = "HERALD_TEST_REQUIRE_SERVICES"

// Require returns the value of the environment variable name, such as
// "HERALD_TEST_REDIS_ADDR". When it is unset or empty, it skips the test
// with a message naming the variable, unless HERALD_TEST_REQUIRE_SERVICES
// is "1", in which case it fails the test. Either way the test stops.
func Require(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv(RequireServices) == "1" {
			t.Fatalf("%s is not set and %s=1", name, RequireServices)
		}
		t.Skipf("%s is not set", name)
	}
	return v
}

// Logger returns a logger for code under test that shows errors only,
// since fault tests make engines warn by design, unless HERALD_TEST_LOG=debug
// asks for everything.
func Logger() *slog.Logger {
	level := slog.LevelError
	if os.Getenv("HERALD_TEST_LOG") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// WebSocketPollerVar is the variable that makes the tests run the
// WebSocket transport with one poller ("auto", "epoll" or "portable"), as
// scripts/test.sh does for a second run with "portable".
const WebSocketPollerVar = "HERALD_TEST_WS_POLLER"

// WebSocketPoller returns the value of HERALD_TEST_WS_POLLER, or "" when it
// is unset: test helpers that start a WebSocket transport put it into its
// configuration (websocket.Config.Poller, or the websocket.poller key),
// which rejects an unknown name with a message that quotes it.
func WebSocketPoller() string { return os.Getenv(WebSocketPollerVar) }
