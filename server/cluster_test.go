package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/jackc/pgx/v5"
)

// TestTwoNodesDeliver runs two whole servers on each networked engine and
// checks that a publication through the API of one reaches a client of the
// other, with its offset when the engine keeps history.
func TestTwoNodesDeliver(t *testing.T) {
	engines := networkedEngines()
	for name, setup := range engines {
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.HTTPAPI.Key = "k"
			cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
			history := name != "nats"
			if history {
				cfg.Channel.WithoutNamespace.HistorySize = 10
				cfg.Channel.WithoutNamespace.HistoryTTL = time.Duration(time.Minute)
				cfg.Channel.WithoutNamespace.ForceRecovery = true
			}
			setup(t, &cfg)
			cfg.Name = "node1"
			n1 := startServer(t, cfg)
			cfg.Name = "node2"
			n2 := startServer(t, cfg)
			t.Cleanup(func() {
				_ = n1.Shutdown(context.Background())
				_ = n2.Shutdown(context.Background())
			})
			c := connectClient(t, n2, "alice")
			ch := "news-" + name
			c.MustSubscribe(2, ch, "")
			testenv.Eventually(t, "both nodes in info", 5*time.Second, func() bool { return len(n1.Hub().Nodes()) == 2 })
			req := `{"channel":"` + ch + `","data":{"n":1}}`
			if body := apiCall(t, n1, "publish", req); !strings.Contains(body, `"result"`) {
				t.Fatalf("publish: %s", body)
			}
			msg := c.Read()
			want := `{"push":{"channel":"` + ch + `","pub":{"data":{"n":1}}}}`
			if history {
				want = `{"push":{"channel":"` + ch + `","pub":{"data":{"n":1},"offset":1}}}`
			}
			if msg != want {
				t.Fatalf("node 2 got %s, want %s", msg, want)
			}
			// The API of node 1 disconnects alice on node 2.
			apiCall(t, n1, "disconnect", `{"user":"alice"}`)
			c.ExpectClose(3503, "")
		})
	}
}

// networkedEngines configures each engine that connects nodes, on the test
// services, under a schema or prefix of the test's own.
func networkedEngines() map[string]func(*testing.T, *config.Config) {
	return map[string]func(*testing.T, *config.Config){
		"postgres": func(t *testing.T, c *config.Config) {
			c.Engine.Type = "postgres"
			c.Engine.Postgres.DSN = testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
			testenv.LockPostgres(t)
			schema := "herald_server_test_" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
			c.Engine.Postgres.Schema = schema
			dsn := c.Engine.Postgres.DSN
			// Registered before the nodes start, so it runs after they
			// stop: each test leaves no schema behind.
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				conn, err := pgx.Connect(ctx, dsn)
				if err != nil {
					t.Errorf("drop schema %s: %v", schema, err)
					return
				}
				defer conn.Close(context.Background())
				if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
					t.Errorf("drop schema %s: %v", schema, err)
				}
			})
		},
		"redis": func(t *testing.T, c *config.Config) {
			c.Engine.Type = "redis"
			c.Engine.Redis.Address = config.StringList{testenv.Require(t, "HERALD_TEST_REDIS_ADDR")}
			c.Engine.Redis.Prefix = "herald-server-test-" + time.Now().Format("150405.000000")
		},
		"nats": func(t *testing.T, c *config.Config) {
			c.Engine.Type = "nats"
			c.Engine.NATS.URL = testenv.Require(t, "HERALD_TEST_NATS_URL")
			c.Engine.NATS.Prefix = "herald-server-test-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
		},
	}
}
