package api_test

import (
	"time"

	"encoding/json"
	"testing"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestChannels(t *testing.T) {
	n := startNode(t, api.Config{})
	n.expect(t, "channels", `{}`, `{"result":{"channels":{}}}`)
	a, b := n.dial(t, "alice"), n.dial(t, "bob")
	a.subscribe("chat")
	b.subscribe("chat")
	a.subscribe("plain:news")
	b.subscribe("plain:sport")
	a.subscribe("room/1")
	testenv.Eventually(t, "subscriptions", 5*time.Second, func() bool { return len(n.hub.Channels()) == 4 })

	for _, c := range []struct{ pattern, want string }{
		{``, `{"chat":{"num_clients":2},"plain:news":{"num_clients":1},"plain:sport":{"num_clients":1},"room/1":{"num_clients":1}}`},
		{`*`, `{"chat":{"num_clients":2},"plain:news":{"num_clients":1},"plain:sport":{"num_clients":1},"room/1":{"num_clients":1}}`},
		// No separators: * crosses '/' and ':'.
		{`r*1`, `{"room/1":{"num_clients":1}}`},
		{`*s*`, `{"plain:news":{"num_clients":1},"plain:sport":{"num_clients":1}}`},
		{`plain:*`, `{"plain:news":{"num_clients":1},"plain:sport":{"num_clients":1}}`},
		{`plain:{news,weather}`, `{"plain:news":{"num_clients":1}}`},
		{`ch?t`, `{"chat":{"num_clients":2}}`},
		{`[!pr]*`, `{"chat":{"num_clients":2}}`},
		{`nothing`, `{}`},
	} {
		body := `{}`
		if c.pattern != "" {
			body = `{"pattern":"` + c.pattern + `"}`
		}
		n.expect(t, "channels", body, `{"result":{"channels":`+c.want+`}}`)
	}
	if got := n.expectError(t, "channels", `{"pattern":"{a"}`, 107); got != "pattern: glob: syntax error at 2: unclosed `{`" {
		t.Errorf("bad pattern: %q", got)
	}
}

func TestInfo(t *testing.T) {
	n := startNode(t, api.Config{})
	a := n.dial(t, "alice")
	a.subscribe("chat")
	a.subscribe("plain:x")
	n.dial(t, "alice")
	n.dial(t, "bob")

	var res struct {
		Result struct {
			Nodes []map[string]json.RawMessage `json:"nodes"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(n.call(t, "info", `{}`)), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Result.Nodes) != 1 {
		t.Fatalf("nodes: %v", res.Result.Nodes)
	}
	nd := res.Result.Nodes[0]
	for k, want := range map[string]string{
		"uid": `"` + n.hub.NodeID() + `"`, "name": `"test-node"`, "version": `"1.2.3"`,
		"num_clients": "3", "num_users": "2", "num_channels": "2", "num_subs": "2",
	} {
		if string(nd[k]) != want {
			t.Errorf("%s = %s, want %s", k, nd[k], want)
		}
	}
	for k := range nd {
		switch k {
		case "uid", "name", "version", "num_clients", "num_users", "num_channels", "num_subs", "uptime":
		default:
			t.Errorf("unexpected field %s", k)
		}
	}
}
