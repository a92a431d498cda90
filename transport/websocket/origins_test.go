package websocket

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"
)

// A burst of upgrades from a refused origin is logged once, with the
// origin and the hint; another origin gets its own line.
func TestRefusedOriginLoggedOncePerBurst(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		logs := &logCapture{}
		const hint = "add it to websocket.allowed_origins"
		h := newHarness(t, Config{Poller: kind, Logger: slog.New(logs), OriginHint: hint})
		refuse := func(origin string) {
			t.Helper()
			c, resp, err := gorilla.DefaultDialer.Dial(h.url(""), http.Header{"Origin": {origin}})
			if err == nil {
				c.Close()
				t.Fatalf("origin %s accepted", origin)
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("origin %s: response %v, want 403", origin, resp)
			}
		}
		for range 20 {
			refuse("http://localhost:5173")
		}
		refuse("http://other.example")

		warned := logs.matching(slog.LevelWarn, "websocket origin refused (403)")
		if len(warned) != 2 {
			t.Fatalf("%d warnings, want one per origin", len(warned))
		}
		for i, want := range []string{"http://localhost:5173", "http://other.example"} {
			if got := attr(warned[i], "origin"); got != want {
				t.Errorf("warning %d names origin %q, want %q", i, got, want)
			}
			if got := attr(warned[i], "fix"); got != hint {
				t.Errorf("warning %d: fix = %q, want %q", i, got, hint)
			}
		}
	})
}

func TestRefusedOriginsRateLimit(t *testing.T) {
	o := newRefusedOrigins()
	now := time.Unix(1_000_000, 0)
	if !o.shouldLog("http://a", now) {
		t.Fatal("first refusal not logged")
	}
	if o.shouldLog("http://a", now.Add(o.interval-time.Second)) {
		t.Fatal("logged again within the interval")
	}
	if !o.shouldLog("http://a", now.Add(o.interval)) {
		t.Fatal("not logged again after the interval")
	}
	// Many distinct origins at once: the global limit caps the lines, and
	// the table stays bounded.
	logged := 0
	for i := range 5 * maxTrackedOrigins {
		if o.shouldLog("http://h"+string(rune('a'+i%26))+time.Duration(i).String(), now.Add(2*o.interval)) {
			logged++
		}
	}
	if logged > 10 {
		t.Fatalf("%d lines for a flood of origins at one instant, want at most the burst of 10", logged)
	}
	if len(o.last) > maxTrackedOrigins {
		t.Fatalf("%d origins tracked, want at most %d", len(o.last), maxTrackedOrigins)
	}
}
