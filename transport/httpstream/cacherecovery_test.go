package httpstream

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
)

// TestUniAutoCacheRecover: a unidirectional client's server-side
// subscription to a namespace with auto_cache_recover carries the
// channel's latest publication in the connect push, so an SSE or
// HTTP-streaming reader has the current value before any new publication.
func TestUniAutoCacheRecover(t *testing.T) {
	e := newEnv(t, Config{}, func(c *hub.Config) {
		c.Channels = hub.ChannelConfig{Namespaces: []hub.Namespace{{Name: "prices", NamespaceOptions: hub.NamespaceOptions{
			HistorySize: 1, HistoryTTL: time.Minute, ForceRecovery: true, ForceRecoveryMode: hub.RecoveryCache, AutoCacheRecover: true,
		}}}}
		c.Handlers.OnConnecting = func(_ context.Context, ev hub.ConnectEvent) (hub.ConnectReply, error) {
			return hub.ConnectReply{User: "u1", Subs: map[string]auth.SubOptions{"prices:btc": {}}}, nil
		}
	})
	publish(t, e, "prices:btc", `{"p":1}`)
	publish(t, e, "prices:btc", `{"p":2}`)
	latest := 2
	for _, tc := range []struct {
		name string
		open func() *clientStream
	}{
		{"uni_sse", func() *clientStream { return e.open(http.MethodGet, pathUniSSE, "", nil) }},
		{"uni_http_stream", func() *clientStream {
			return e.open(http.MethodPost, pathUniHTTPStream, "application/json", []byte(`{}`))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := tc.open()
			p := cs.push()
			if p.Connect == nil {
				t.Fatalf("first push %+v, want the connect push", p)
			}
			sub := p.Connect.Subs["prices:btc"]
			if sub == nil || !sub.Recovered || !sub.WasRecovering || len(sub.Publications) != 1 || string(sub.Publications[0].Data) != fmt.Sprintf(`{"p":%d}`, latest) {
				t.Fatalf("connect push subs[prices:btc] = %+v, want the latest publication", sub)
			}
			latest++
			publish(t, e, "prices:btc", fmt.Sprintf(`{"p":%d}`, latest))
			if p := cs.push(); p.Pub == nil || string(p.Pub.Data) != fmt.Sprintf(`{"p":%d}`, latest) {
				t.Fatalf("push %+v, want the next publication", p)
			}
			cs.close()
		})
	}
}
