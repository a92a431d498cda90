package loadgen_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
)

// TestSharedPollAgainstHerald: every tracking connection of both client
// kinds gets the raised version, and the node asks the backend for each
// key once per interval however many connections track it.
func TestSharedPollAgainstHerald(t *testing.T) {
	noLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	backend := ln.Addr().String()
	ln.Close()
	cfg := heraldConfig(t, `
shared_poll:
  hmac_secret_key: "poll-secret"
proxies:
  - name: poll_backend
    endpoint: http://`+backend+`/
channel:
  namespaces:
    - name: poll
      subscription_type: shared_poll
      allow_subscribe_for_client: true
      shared_poll:
        proxy_name: poll_backend
        mode: versioned
        refresh_interval: 200ms
`)
	s := startHeraldWith(t, cfg)
	for _, client := range []string{loadgen.ClientLight, loadgen.ClientHeavy} {
		t.Run(client, func(t *testing.T) {
			res, err := loadgen.RunSharedPoll(context.Background(), loadgen.SharedPollConfig{
				Pool: loadgen.PoolConfig{
					URLs: []string{wsURL(s)}, Secret: secret, UserPrefix: "poller-" + client, Client: client,
					Track: &loadgen.TrackConfig{Secret: "poll-secret", Keys: 5, PerConn: 2},
				},
				Connections: 20, Channel: "poll:" + client, Backend: backend,
				Interval: 200 * time.Millisecond, Measure: time.Second, Wait: 10 * time.Second,
			}, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			if res.Connected != 20 || res.Expected != 40 || res.Received != 40 || res.Keys != 5 {
				t.Fatalf("%+v", res)
			}
			// About one request for the five keys per interval (the
			// first polls of new keys and the edges of the measured
			// second add a few), not one per tracking connection.
			if res.CallsPerInterval < 0.5 || res.CallsPerInterval > 4 || res.KeysPerCall < 1 {
				t.Errorf("backend calls: %+v", res)
			}
			if res.ToLast <= 0 || res.FromRaise < res.ToLast {
				t.Errorf("times: %+v", res)
			}
		})
	}
}
