package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// TestExecutor: the executor runs the API's methods without HTTP and
// answers their errors as *api.Error with the HTTP API's codes; only 100
// and 111 are temporary; a broadcast that failed in one channel is an
// error; an idempotency key repeats the first result.
func TestExecutor(t *testing.T) {
	h := startHub(t, hub.Config{Engine: memory.New(memory.Config{}), Channels: testChannels()})
	x, err := api.NewExecutor(h, api.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := x.Execute(ctx, "publish", []byte(`{"channel":"chat","data":{"a":1},"idempotency_key":"k"}`))
	if err != nil {
		t.Fatal(err)
	}
	again, err := x.Execute(ctx, "publish", []byte(`{"channel":"chat","data":{"a":1},"idempotency_key":"k"}`))
	if err != nil || jsonOf(t, again) != jsonOf(t, first) {
		t.Fatalf("repeat: %v %v, want the first result %v", again, err, first)
	}
	for _, tc := range []struct {
		method, body string
		code         protocol.ErrorCode
		temporary    bool
	}{
		{"no_such", `{}`, 104, false},
		{"batch", `{"commands":[]}`, 104, false},
		{"publish", `not json`, 107, false},
		{"publish", `{"data":{}}`, 107, false},
		{"publish", `{"channel":"nope:x","data":{}}`, 102, false},
		{"broadcast", `{"channels":["chat","nope:x"],"data":{}}`, 102, false},
	} {
		_, err := x.Execute(ctx, tc.method, []byte(tc.body))
		var e *api.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Temporary != tc.temporary {
			t.Errorf("%s %s: %v, want error %d", tc.method, tc.body, err, tc.code)
		}
	}
	if !protocol.ErrorInternal.Coded().Temporary || !protocol.ErrorTooManyRequests.Coded().Temporary {
		t.Error("100 and 111 must be temporary")
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
