package hub_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// rateBuckets is n operations an hour: a bucket that does not refill
// within a test, so what it allows is exact.
func rateBuckets(n int) hub.RateBuckets {
	return hub.RateBuckets{Enabled: true, Buckets: []hub.RateBucket{{Interval: time.Hour, Rate: n}}}
}

// chanBuckets is rateBuckets for a channel command.
func chanBuckets(n int) hub.ChannelRateBuckets {
	return hub.ChannelRateBuckets{RateBuckets: rateBuckets(n)}
}

// publishOpen is a namespace where any client may publish and subscribe.
var publishOpen = hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowPublishForClient: true, AllowSubscribeForClient: true, AllowHistoryForClient: true}}

func publishCmd(id int) string {
	return fmt.Sprintf(`{"id":%d,"publish":{"channel":"room","data":{}}}`, id)
}

// TestRateLimitClientCommand: a connection over its publish buckets gets
// error 111 for publish only; other commands, and other connections of
// the same user, are not affected.
func TestRateLimitClientCommand(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: publishOpen, Client: hub.ClientConfig{RateLimit: hub.RateLimitConfig{
		ClientCommand: hub.CommandRateLimits{Enabled: true, Publish: chanBuckets(2)},
	}}})
	c := n.dial(t)
	c.Connect("u")
	for id := 2; id <= 3; id++ {
		if m := c.Call(publishCmd(id)); m["error"] != nil {
			t.Fatalf("publish %d within the limit: %v", id, m)
		}
	}
	jsonclient.WantError(t, c.Call(publishCmd(4)), 111)
	if m := c.Call(`{"id":5,"history":{"channel":"room"}}`); jsonclient.ErrorCode(m) == 111 {
		t.Fatalf("history has no buckets, yet was refused: %v", m)
	}
	other := n.dial(t)
	other.Connect("u")
	if m := other.Call(publishCmd(2)); m["error"] != nil {
		t.Fatalf("another connection of the same user: %v", m)
	}
}

// TestRateLimitUserCommand: the user's connections draw from one set of
// buckets; another user has its own, and connects are counted per user.
func TestRateLimitUserCommand(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: publishOpen, Client: hub.ClientConfig{RateLimit: hub.RateLimitConfig{
		UserCommand: hub.CommandRateLimits{Enabled: true, Publish: chanBuckets(2), Connect: rateBuckets(3)},
	}}})
	a1, a2 := n.dial(t), n.dial(t)
	a1.Connect("alice")
	a2.Connect("alice")
	if m := a1.Call(publishCmd(2)); m["error"] != nil {
		t.Fatalf("first publish: %v", m)
	}
	if m := a2.Call(publishCmd(2)); m["error"] != nil {
		t.Fatalf("second publish: %v", m)
	}
	jsonclient.WantError(t, a2.Call(publishCmd(3)), 111)
	jsonclient.WantError(t, a1.Call(publishCmd(3)), 111)
	bob := n.dial(t)
	bob.Connect("bob")
	if m := bob.Call(publishCmd(2)); m["error"] != nil {
		t.Fatalf("another user: %v", m)
	}
	// alice's third connect is within 3; the fourth is refused.
	n.dial(t).Connect("alice")
	fourth := n.dial(t)
	fourth.Send(fmt.Sprintf(`{"id":1,"connect":{"token":%q}}`, token(t, auth.ConnectClaims{User: "alice"})))
	jsonclient.WantError(t, fourth.Reply(1), 111)
}

// TestRateLimitRPCMethodOverride: a method with buckets of its own is
// counted apart from the other methods.
func TestRateLimitRPCMethodOverride(t *testing.T) {
	t.Parallel()
	rpc := hub.RPCRateBuckets{RateBuckets: rateBuckets(5), MethodOverrides: []hub.RPCMethodRateBuckets{{Method: "slow", RateBuckets: rateBuckets(1)}}}
	n := startNode(t, hub.Config{Client: hub.ClientConfig{RateLimit: hub.RateLimitConfig{
		ClientCommand: hub.CommandRateLimits{Enabled: true, RPC: rpc},
	}}})
	c := n.dial(t)
	c.Connect("u")
	if m := c.Call(`{"id":2,"rpc":{"method":"slow"}}`); jsonclient.ErrorCode(m) == 111 {
		t.Fatalf("first slow rpc: %v", m)
	}
	jsonclient.WantError(t, c.Call(`{"id":3,"rpc":{"method":"slow"}}`), 111)
	if m := c.Call(`{"id":4,"rpc":{"method":"fast"}}`); jsonclient.ErrorCode(m) == 111 {
		t.Fatalf("another method draws from the rpc buckets: %v", m)
	}
}

// TestRateLimitTotal: total caps the commands together, unsubscribe is
// counted but never refused.
func TestRateLimitTotal(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: publishOpen, Client: hub.ClientConfig{RateLimit: hub.RateLimitConfig{
		ClientCommand: hub.CommandRateLimits{Enabled: true, Total: rateBuckets(3)},
	}}})
	c := n.dial(t)
	c.Connect("u")
	c.Call(publishCmd(2))
	c.Call(`{"id":3,"history":{"channel":"room"}}`)
	c.Call(`{"id":4,"unsubscribe":{"channel":"x"}}`)
	if m := c.Call(`{"id":5,"unsubscribe":{"channel":"x"}}`); m["error"] != nil {
		t.Fatalf("unsubscribe over total must not be refused: %v", m)
	}
	jsonclient.WantError(t, c.Call(publishCmd(6)), 111)
}

// TestRateLimitClientError: a connection that keeps getting errors is
// closed with 3509, not reconnecting; others stay.
func TestRateLimitClientError(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: publishOpen, Client: hub.ClientConfig{RateLimit: hub.RateLimitConfig{
		ClientCommand: hub.CommandRateLimits{Enabled: true, Publish: chanBuckets(1)},
		ClientError:   hub.ErrorRateLimits{Enabled: true, Total: rateBuckets(2)},
	}}})
	c := n.dial(t)
	c.Connect("u")
	c.Call(publishCmd(2))
	jsonclient.WantError(t, c.Call(publishCmd(3)), 111)
	jsonclient.WantError(t, c.Call(publishCmd(4)), 111)
	c.Send(publishCmd(5))
	c.ExpectClose(3509, "too many errors")
	n.dial(t).Connect("other")
}

// TestRateLimitValidate: bad buckets are refused naming the field.
func TestRateLimitValidate(t *testing.T) {
	t.Parallel()
	bad := hub.ClientConfig{RateLimit: hub.RateLimitConfig{
		ClientCommand: hub.CommandRateLimits{Enabled: true, Connect: rateBuckets(1),
			Publish: hub.ChannelRateBuckets{RateBuckets: hub.RateBuckets{Enabled: true, Buckets: []hub.RateBucket{{Interval: time.Millisecond, Rate: 0}}},
				NamespaceOverrides: []hub.NamespaceRateBuckets{{RateBuckets: rateBuckets(1)}}},
			RPC: hub.RPCRateBuckets{MethodOverrides: []hub.RPCMethodRateBuckets{{}}}},
	}}
	got := map[string]string{}
	for _, oe := range hub.OptionErrors(bad.Validate()) {
		got[oe.Field] = oe.Message
	}
	for field, want := range map[string]string{
		"RateLimit.ClientCommand.Connect":                                     "per user only",
		"RateLimit.ClientCommand.Publish.Buckets[0].Interval":                 "want from 1s to 1h0m0s",
		"RateLimit.ClientCommand.Publish.Buckets[0].Rate":                     "want at least 1",
		"RateLimit.ClientCommand.RPC.MethodOverrides[0].Method":               "want the rpc method",
		"RateLimit.ClientCommand.Publish.NamespaceOverrides[0].NamespaceName": "want the namespace",
	} {
		if !strings.Contains(got[field], want) {
			t.Errorf("%s: got %q, want it to contain %q (all: %v)", field, got[field], want, got)
		}
	}
	_, err := hub.New(hub.Config{Engine: memory.New(memory.Config{}), Client: bad})
	if err == nil {
		t.Error("hub.New took bad rate limits")
	}
}

// sharedBuckets is an engine whose cluster-wide buckets are a map of
// counts, shared by the nodes of a test; broken makes every check fail.
type sharedBuckets struct {
	engine.Engine
	mu     sync.Mutex
	taken  map[string]int
	broken bool
}

func (s *sharedBuckets) Unwrap() engine.Engine { return s.Engine }

func (s *sharedBuckets) TakeRate(_ context.Context, key string, buckets []engine.RateBucket) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return false, errors.New("engine down")
	}
	if s.taken[key] >= buckets[0].Rate {
		return false, nil
	}
	s.taken[key]++
	return true, nil
}

// TestRateLimitRedisUserCommand: the user's buckets are the engine's, so
// the user's connections share them; a failing engine allows; an engine
// without shared buckets is refused at start.
func TestRateLimitRedisUserCommand(t *testing.T) {
	t.Parallel()
	limits := hub.RateLimitConfig{RedisUserCommand: hub.CommandRateLimits{Enabled: true, Publish: chanBuckets(2)}}
	eng := &sharedBuckets{Engine: memory.New(memory.Config{}), taken: map[string]int{}}
	n := startNode(t, hub.Config{Engine: eng, Channels: publishOpen, Client: hub.ClientConfig{RateLimit: limits}})
	a, b := n.dial(t), n.dial(t)
	a.Connect("alice")
	b.Connect("alice")
	for i, c := range []*rawClient{a, b} {
		if m := c.Call(publishCmd(2)); m["error"] != nil {
			t.Fatalf("publish %d: %v", i, m)
		}
	}
	jsonclient.WantError(t, a.Call(publishCmd(3)), 111)
	bob := n.dial(t)
	bob.Connect("bob")
	if m := bob.Call(publishCmd(2)); m["error"] != nil {
		t.Fatalf("another user: %v", m)
	}
	eng.mu.Lock()
	eng.broken = true
	eng.mu.Unlock()
	if m := a.Call(publishCmd(4)); m["error"] != nil {
		t.Fatalf("with the engine failing the command must pass: %v", m)
	}

	// An engine seen through a wrapper that does not unwrap keeps none.
	_, err := hub.New(hub.Config{Engine: struct{ engine.Engine }{memory.New(memory.Config{})}, Client: hub.ClientConfig{RateLimit: limits}})
	if oes := hub.OptionErrors(err); len(oes) != 1 || oes[0].Field != "Client.RateLimit.RedisUserCommand" {
		t.Errorf("an engine without shared buckets: want one problem with Client.RateLimit.RedisUserCommand, got %v", err)
	}
}

// TestRateLimitOwnStore: Config.RateLimiter keeps the redis_user_command
// buckets instead of the engine, even an engine that keeps none.
func TestRateLimitOwnStore(t *testing.T) {
	t.Parallel()
	limits := hub.RateLimitConfig{RedisUserCommand: hub.CommandRateLimits{Enabled: true, Publish: chanBuckets(1)}}
	own := &sharedBuckets{taken: map[string]int{}}
	eng := struct{ engine.Engine }{memory.New(memory.Config{})} // keeps no buckets
	n := startNode(t, hub.Config{Engine: eng, RateLimiter: own, Channels: publishOpen, Client: hub.ClientConfig{RateLimit: limits}})
	a := n.dial(t)
	a.Connect("alice")
	if m := a.Call(publishCmd(2)); m["error"] != nil {
		t.Fatalf("first publish: %v", m)
	}
	jsonclient.WantError(t, a.Call(publishCmd(3)), 111)
	own.mu.Lock()
	defer own.mu.Unlock()
	if len(own.taken) != 1 {
		t.Errorf("the store of its own holds %v, want alice's publish buckets", own.taken)
	}
}
