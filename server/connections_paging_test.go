package server

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestConnectionsPaging: the connections API walks every connection of
// the cluster exactly once, a page at a time, on one node (where every
// page used to end without a next_cursor) and on two.
func TestConnectionsPaging(t *testing.T) {
	for _, tt := range []struct {
		name  string
		nodes int
		setup func(*testing.T, *config.Config)
	}{
		{"one node", 1, func(*testing.T, *config.Config) {}},
		{"two nodes", 2, networkedEngines()["redis"]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.HTTPAPI.Key = "k"
			tt.setup(t, &cfg)
			var nodes []*Server
			for i := range tt.nodes {
				cfg.Name = fmt.Sprintf("node%d", i+1)
				s := startServer(t, cfg)
				t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
				nodes = append(nodes, s)
			}
			testenv.Eventually(t, "every node known", 10*time.Second, func() bool { return len(nodes[0].Hub().Nodes()) == tt.nodes })
			const total = 7
			for i := range total {
				connectClient(t, nodes[i%tt.nodes], fmt.Sprintf("user%d", i))
			}
			for _, limit := range []int{1, 2, 3, total, total + 1} {
				seen := map[string]int{}
				cursor, pages := "", 0
				for {
					var res struct {
						Result struct {
							Connections []struct{ Client string }
							NextCursor  string `json:"next_cursor"`
						}
						Error any
					}
					body := fmt.Sprintf(`{"limit":%d,"cursor":%q}`, limit, cursor)
					if err := json.Unmarshal([]byte(apiCall(t, nodes[0], "connections", body)), &res); err != nil || res.Error != nil {
						t.Fatalf("connections %s: %v %v", body, err, res.Error)
					}
					if len(res.Result.Connections) > limit {
						t.Fatalf("limit %d: a page of %d", limit, len(res.Result.Connections))
					}
					for _, c := range res.Result.Connections {
						seen[c.Client]++
					}
					pages++
					if res.Result.NextCursor == "" {
						break
					}
					if pages > total+1 {
						t.Fatalf("limit %d: still paging after %d pages", limit, pages)
					}
					cursor = res.Result.NextCursor
				}
				if len(seen) != total {
					t.Fatalf("limit %d: %d connections seen over %d pages, want %d", limit, len(seen), pages, total)
				}
				for c, n := range seen {
					if n != 1 {
						t.Fatalf("limit %d: connection %s seen %d times", limit, c, n)
					}
				}
				if want := (total + limit - 1) / limit; pages != want {
					t.Errorf("limit %d: %d pages, want %d", limit, pages, want)
				}
			}
		})
	}
}
