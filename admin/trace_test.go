package admin_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/admin"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/ssetest"
)

// TestTraceUser: a user trace streams the user's connect, subscribe and
// publications as "trace" events, over GET (EventSource) and over POST
// with Centrifugo's {"type", "entity"} body.
func TestTraceUser(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword}, false)
	e.login()
	for i, open := range []func(ctx context.Context) *http.Request{
		func(ctx context.Context) *http.Request {
			req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/admin/api/trace?type=user&entity=erin", nil)
			return req
		},
		func(ctx context.Context) *http.Request {
			req, _ := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/admin/api/trace", strings.NewReader(`{"type":"user","entity":"erin"}`))
			req.Header.Set(admin.CSRFHeader, e.csrf)
			return req
		},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := e.client.Do(open(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("trace %d: %d %s", i, res.StatusCode, res.Header.Get("Content-Type"))
		}
		rd := ssetest.NewReader(bufio.NewReader(res.Body))
		if ev, err := rd.Next(); err != nil || ev.Name != "ready" {
			t.Fatalf("first event %+v (%v), want ready", ev, err)
		}
		ch := "room" + string(rune('a'+i))
		e.connectUser("erin", ch)
		if _, err := e.hub.Publish(ctx, ch, []byte(`{"n":1}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"connect", "subscribe", "publication"} {
			ev, err := rd.Next()
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Type, User, Channel string
				Data                json.RawMessage
			}
			if ev.Name != "trace" || json.Unmarshal([]byte(ev.Data), &got) != nil || got.Type != want || got.User != "erin" {
				t.Fatalf("event %+v, want a %s trace of erin", ev, want)
			}
			if want == "publication" && (got.Channel != ch || string(got.Data) != `{"n":1}`) {
				t.Fatalf("publication %+v", got)
			}
		}
		cancel()
	}
}

// TestTraceRequests: a trace needs CSRF for POST (a login, like every
// endpoint: TestNoLoginIs401), a type and an entity.
func TestTraceRequests(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword}, false)
	e.login()
	if status, _ := e.do("POST", "api/trace", `{"type":"user","entity":"u"}`, nil); status != http.StatusForbidden {
		t.Fatalf("POST without CSRF: %d", status)
	}
	for _, q := range []string{"type=node&entity=u", "type=user", "type=channel&entity="} {
		if status, body := e.do("GET", "api/trace?"+q, nil, nil); status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", q, status, body)
		}
	}
	// With the node's traces all open, one more is refused.
	for range hub.MaxTraces {
		tr, err := e.hub.Trace(hub.TraceUser, "u", 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.Close)
	}
	if status, body := e.do("GET", "api/trace?type=user&entity=u", nil, nil); status != http.StatusTooManyRequests {
		t.Fatalf("past the limit: %d %s", status, body)
	}
}

// TestInspectUser: the inspector reports a block.
func TestInspectUser(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword}, false)
	e.login()
	if err := e.hub.BlockUser(context.Background(), "mallory", 0); err != nil {
		t.Fatal(err)
	}
	status, body := e.do("GET", "api/inspect/user?user=mallory", nil, nil)
	var got struct {
		User   string
		Access struct{ Blocked bool }
	}
	if status != 200 || json.Unmarshal(body, &got) != nil || got.User != "mallory" || !got.Access.Blocked {
		t.Fatalf("inspect: %d %s", status, body)
	}
	if status, _ := e.do("GET", "api/inspect/user", nil, nil); status != http.StatusBadRequest {
		t.Fatalf("without a user: %d", status)
	}
}

// TestTraceOutlivesItsWriteTimeoutWhenIdle: each keep-alive is written
// under a write timeout of its own. With the deadline of the last event
// left in place, the first keep-alive after an idle write timeout failed
// and ended the trace.
func TestTraceOutlivesItsWriteTimeoutWhenIdle(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword, KeepAlive: 300 * time.Millisecond, TraceWriteTimeout: 100 * time.Millisecond}, false)
	e.login()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/admin/api/trace?type=user&entity=kai", nil)
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	for keepAlives := 0; keepAlives < 2; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the idle trace ended after %d keep-alives: %v", keepAlives, err)
		}
		if line == ": keep-alive\n" {
			keepAlives++
		}
	}
	e.connectUser("kai", "room")
	rd := ssetest.NewReader(br)
	if ev, err := rd.Next(); err != nil || ev.Name != "trace" || !strings.Contains(ev.Data, `"connect"`) {
		t.Fatalf("after the keep-alives: %+v (%v), want kai's connect", ev, err)
	}
}
