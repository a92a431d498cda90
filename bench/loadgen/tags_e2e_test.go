package loadgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/protocol"
)

// TestTagsAgainstHerald: with both client kinds and formats, each
// publication reaches exactly the subscribers whose filter it matches.
func TestTagsAgainstHerald(t *testing.T) {
	noLeaks(t)
	cfg := heraldConfig(t, `
channel:
  namespaces:
    - name: tags
      allow_subscribe_for_client: true
      allow_tags_filter: true
`)
	s := startHeraldWith(t, cfg)
	for _, client := range []string{loadgen.ClientLight, loadgen.ClientHeavy} {
		for _, format := range []protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf} {
			name := client + "-" + format.String()
			t.Run(name, func(t *testing.T) {
				res, err := loadgen.RunTags(context.Background(), loadgen.TagsConfig{
					Pool:        loadgen.PoolConfig{URLs: []string{wsURL(s)}, Secret: secret, UserPrefix: name, Client: client, Format: format},
					Subscribers: 12, Filters: 5, Channel: "tags:" + name,
					APIURL: "http://" + s.Addr() + "/api", APIKey: "api-key", APIConns: 2,
					Rate: 100, Step: 300 * time.Millisecond, Payload: 64, Grace: 10 * time.Second,
				}, t.Logf)
				if err != nil {
					t.Fatal(err)
				}
				// 30 publications, 12 subscribers over 5 filters: filters
				// 0 and 1 have 3 subscribers, the others 2; 6 publications each.
				if res.Connected != 12 || res.Sent != 30 || res.Expected != 6*(3+3+2+2+2) || res.Received != res.Expected ||
					res.Wrong != 0 || res.Latency.Count != res.Expected {
					t.Fatalf("%+v", res)
				}
			})
		}
	}
}
