package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestEmulationProbe sends what an outside prober sent to /emulation on a
// two-node cluster of each networked engine: requests with no token that
// name the other, live node with sessions it never made, oversized
// commands for a real session, and a flood for one real session. Forged
// sessions must be refused on the node that received them, with nothing
// crossing to the other node (no engine message, no row written in PostgreSQL, no
// spilled row); oversized commands must be refused before they are
// forwarded; a session's flood is rate-limited. Then large payloads and a
// large control message, sent by an API caller, must cross intact.
func TestEmulationProbe(t *testing.T) {
	for name, configure := range networkedEngines() {
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.HTTPAPI.Key = "k"
			cfg.Channel.WithoutNamespace.AllowSubscribeForClient = true
			cfg.Shutdown.DrainWindow = 50 * time.Millisecond
			configure(t, &cfg)
			watch := watchControlPlane(t, name, cfg)
			var nodes []*Server
			for _, n := range []string{"probe-a", "probe-b"} {
				cfg.Name = n
				s := startServer(t, cfg)
				t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					if err := s.Shutdown(ctx); err != nil {
						t.Errorf("shut down %s: %v", n, err)
					}
				})
				nodes = append(nodes, s)
			}
			a, b := nodes[0], nodes[1]
			testenv.Eventually(t, "both nodes to know each other", 10*time.Second, func() bool {
				return len(a.Hub().Nodes()) == 2 && len(b.Hub().Nodes()) == 2
			})
			client := &http.Client{}
			t.Cleanup(client.CloseIdleConnections)

			// A real session on A works through B.
			c := mustOpenStream(t, a, HTTPStreamPath, "alice")
			c.emulate(b, `{"id":2,"subscribe":{"channel":"probe"}}`)
			c.awaitMessage(`{"id":2,"subscribe":{`)

			// Oversized commands for it are refused by B, not forwarded.
			big := `{"id":3,"rpc":{"data":"` + strings.Repeat("x", hub.MaxForwardedEmulation) + `"}}`
			if code := postEmulationBody(t, client, b, c.session, c.node, big); code != http.StatusRequestEntityTooLarge {
				t.Fatalf("oversized emulation through the other node: %d, want 413", code)
			}

			// A flood for the session is cut to its rate limit.
			start := time.Now()
			forwarded := 0
			const flood = 150
			for i := range flood {
				switch code := postEmulationBody(t, client, b, c.session, c.node, `{"id":`+strconv.Itoa(100+i)+`,"presence_stats":{"channel":"probe"}}`); code {
				case http.StatusNoContent:
					forwarded++
				case http.StatusTooManyRequests:
				default:
					t.Fatalf("flood request %d: %d, want 204 or 429", i, code)
				}
			}
			if most := hub.DefaultEmulationPerSessionBurst + int(time.Since(start).Seconds()*hub.DefaultEmulationPerSession) + 1; forwarded > most {
				t.Errorf("%d of %d requests for one session forwarded, want at most %d (burst and rate)", forwarded, flood, most)
			}
			if forwarded == flood {
				t.Error("no request of a session's flood was rate-limited")
			}

			// The probe proper: forged sessions naming the other node.
			if name != "postgres" {
				// The subscribe and the flood's forwarded requests.
				testenv.Eventually(t, "the watcher to see what was forwarded", 10*time.Second, func() bool {
					return watch.emulations() == int64(forwarded+1)
				})
			}
			watch.reset()
			before := watch.cost(t, a, b)
			const probes = 400 // within the per-address burst: every one is checked, none rate-limited
			data := strings.Repeat(`{"id":1,"publish":{"channel":"x","data":"`+strings.Repeat("A", 500)+`"}}`+"\n", 100)
			for i := range probes {
				code := postEmulationBody(t, client, b, forgedSession(i), a.Hub().NodeID(), data)
				if code != http.StatusNotFound && code != http.StatusTooManyRequests {
					t.Fatalf("forged session %d naming the other node: %d, want 404 (or 429)", i, code)
				}
			}
			after := watch.cost(t, a, b)
			t.Logf("forged-session probe cost: %+v", after.sub(before))
			if n := watch.emulations(); n != 0 {
				t.Errorf("%d emulation messages crossed the engine for forged sessions, want 0", n)
			}
			if d := after.sub(before); d.writes >= probes || d.spilled != 0 || d.spillRows != 0 || d.transactions > probes/10 {
				t.Errorf("forged-session probe cost: %+v, want no spilled row, fewer row writes in the cluster's schema than the %d requests", d, probes)
			}

			// Large payloads from an authenticated caller cross nodes intact: a
			// publication and a server-side subscribe (a control message to
			// every node) of 600 KB each, sent to B for the stream on A. (On
			// PostgreSQL they go through the spill table, as they may: they
			// are not emulation traffic.)
			large := strings.Repeat("x", 600<<10)
			if body := apiCall(t, b, "publish", `{"channel":"probe","data":{"big":"`+large+`"}}`); !strings.Contains(body, `"result"`) {
				t.Fatalf("large publish: %.200s", body)
			}
			c.awaitMessage(`"pub":{"data":{"big":"` + large + `"}`)
			if body := apiCall(t, b, "subscribe", `{"user":"alice","channel":"probe-big","data":{"big":"`+large+`"}}`); !strings.Contains(body, `"result"`) {
				t.Fatalf("large server-side subscribe: %.200s", body)
			}
			c.awaitMessage(`"channel":"probe-big"`)
		})
	}
}

// forgedSession looks like a session id but was made by no node.
func forgedSession(i int) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	b[0] = byte(i)
	return base64.RawURLEncoding.EncodeToString(b)
}

func postEmulationBody(t *testing.T, client *http.Client, s *Server, session, node, data string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"session": session, "node": node, "data": data})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+s.Addr()+EmulationPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("emulation: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// controlWatch observes the engine's control plane from outside the nodes:
// it counts emulation messages on the engine's wire (Redis, NATS) and, on
// PostgreSQL, what the nodes cost the database.
type controlWatch struct {
	engine string
	seen   atomic.Int64
	// PostgreSQL
	dsn, schema string
}

type probeCost struct {
	writes, spillRows, spilled, transactions float64
}

func (c probeCost) sub(o probeCost) probeCost {
	return probeCost{writes: c.writes - o.writes, spillRows: c.spillRows - o.spillRows,
		spilled: c.spilled - o.spilled, transactions: c.transactions - o.transactions}
}

func (w *controlWatch) reset()            { w.seen.Store(0) }
func (w *controlWatch) emulations() int64 { return w.seen.Load() }

func (w *controlWatch) count(payload []byte) {
	if bytes.Contains(payload, []byte(`"emulation"`)) {
		w.seen.Add(1)
	}
}

// cost reads PostgreSQL's count of rows written in the cluster's schema,
// the spill table's rows and the nodes' transaction and spill counters.
// The row counts are the schema's, not the database's commit count: other
// packages' tests write to the same database at the same time (thousands
// of commits during the probe in a shared run). They may lag (backends
// report at most once a second): that can only hide writes, never add
// some, so the check stays honest if weaker; the nodes' own counters are
// exact.
func (w *controlWatch) cost(t *testing.T, nodes ...*Server) probeCost {
	t.Helper()
	var c probeCost
	if w.engine != "postgres" {
		return c
	}
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, w.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::float8 FROM pg_stat_user_tables WHERE schemaname = $1`, w.schema).Scan(&c.writes); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+w.schema+`.spill`).Scan(&c.spillRows); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		id := engineNodeID(t, n)
		tx, err := metricValue(ctx, n, "herald_postgres_publish_tx_seconds_count", `node="`+id+`"`)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := metricValue(ctx, n, "herald_postgres_spilled_total", `node="`+id+`"`)
		if err != nil {
			t.Fatal(err)
		}
		c.transactions += tx
		c.spilled += sp
	}
	return c
}

// watchControlPlane subscribes to every control message of the cluster cfg
// configures (Redis, NATS); on PostgreSQL it notes where to look.
func watchControlPlane(t *testing.T, engine string, cfg config.Config) *controlWatch {
	t.Helper()
	w := &controlWatch{engine: engine}
	switch engine {
	case "postgres":
		w.dsn, w.schema = cfg.Engine.Postgres.DSN, cfg.Engine.Postgres.Schema
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if conn, err := pgx.Connect(ctx, w.dsn); err == nil {
				_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+w.schema+" CASCADE")
				_ = conn.Close(ctx)
			}
		})
	case "redis":
		rc := goredis.NewClient(&goredis.Options{Addr: cfg.Engine.Redis.Address[0], Protocol: 2})
		ps := rc.PSubscribe(t.Context(), cfg.Engine.Redis.Prefix+":node:*", cfg.Engine.Redis.Prefix+":control")
		if _, err := ps.Receive(t.Context()); err != nil {
			t.Fatal(err)
		}
		go func() {
			for m := range ps.Channel() {
				w.count([]byte(m.Payload))
			}
		}()
		t.Cleanup(func() { _ = ps.Close(); _ = rc.Close() })
	case "nats":
		nc, err := nats.Connect(cfg.Engine.NATS.URL)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Subscribe(cfg.Engine.NATS.Prefix+".>", func(m *nats.Msg) { w.count(m.Data) }); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
	}
	return w
}
