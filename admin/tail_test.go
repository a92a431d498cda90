package admin_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald/admin"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/ssetest"
)

// TestTailLineBreaksInData: publications whose data holds raw CR, CRLF
// or LF (JSON whitespace) reach the browser as one "pub" event each,
// holding the same JSON value: a raw CR in a data line would end it
// early and split the event.
func TestTailLineBreaksInData(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword}, false)
	e.login()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/admin/api/tail?channel=room", nil)
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rd := ssetest.NewReader(bufio.NewReader(res.Body))
	if ev, err := rd.Next(); err != nil || ev.Name != "ready" {
		t.Fatalf("first event %+v (%v), want ready", ev, err)
	}
	payloads := []string{"{\"a\":\r\r1}", "{\"a\":\r\n1}", "{\"a\":\n1}", "[1,\r2\n,\r\n3]"}
	for _, data := range payloads {
		if _, err := e.hub.Publish(ctx, "room", []byte(data), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, data := range payloads {
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("reading the event of %q: %v", data, err)
		}
		var pub struct{ Data any }
		var want any
		_ = json.Unmarshal([]byte(data), &want)
		if ev.Name != "pub" || json.Unmarshal([]byte(ev.Data), &pub) != nil || !reflect.DeepEqual(pub.Data, want) {
			t.Fatalf("tail event %+v for %q, want a pub event holding %v", ev, data, want)
		}
	}
	if rd.Fields > 0 {
		t.Fatalf("%d lines that were not data or event fields: a payload broke out of its data line", rd.Fields)
	}
}
