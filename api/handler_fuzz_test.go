package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
)

// fuzzMethods are the paths the fuzzer picks from: every method, batch,
// and one that does not exist.
var fuzzMethods = []string{
	"publish", "broadcast", "subscribe", "unsubscribe", "disconnect", "refresh", "presence",
	"presence_stats", "history", "history_remove", "channels", "info", "rpc", "batch", "nope",
	"map_publish", "map_remove", "map_read_state", "map_read_stream", "map_stats", "map_clear",
}

// FuzzHandler sends arbitrary bodies to every API method of a hub on the
// memory engine, in both error modes. Bad input must never panic or be
// answered with a 5xx or an internal error (code 100): it gets a 4xx, or a
// 200 whose JSON holds a result or an error for each command.
func FuzzHandler(f *testing.F) {
	for _, s := range []struct {
		method int
		body   string
	}{
		{0, `{"channel":"chat","data":{"text":"hi <b>"},"tags":{"k":"v"}}`},
		{0, `{"channel":"chat","b64data":"AAEC","skip_history":true}`},
		{0, `{"channel":"chat","data":1,"skip_history":"yes"}`},
		{0, `{"channel":"strict:ABC","data":1}`}, {0, `{"channel":5,"data":1}`}, {0, `{"channel":"chat",}`},
		{1, `{"channels":["news","plain:news","nope:x",""],"data":{"n":1}}`}, {1, `{"channels":"chat","data":1}`},
		{2, `{"user":"u","channel":"chat","data":{},"recover_since":{"offset":1,"epoch":"e"}}`},
		{3, `{"user":"u","channel":"chat","client":"c"}`},
		{4, `{"user":"u","disconnect":{"code":4000,"reason":"r"}}`}, {5, `{"user":"u","expire_at":1}`},
		{6, `{"channel":"chat"}`}, {7, `{"channel":"plain:chat"}`},
		{8, `{"channel":"chat","limit":-1,"reverse":true,"since":{"offset":3,"epoch":"x"}}`},
		{8, `{"channel":"chat","limit":1e12}`}, {8, `{"channel":"chat","since":{"offset":-1}}`},
		{9, `{"channel":"chat"}`}, {10, `{"pattern":"plain:*"}`}, {11, `{}`}, {12, `{"method":"m","params":{}}`},
		{13, `{"commands":[{"publish":{"channel":"chat","data":1}},{"history":{"channel":"plain:room"}},{"info":{}}]}`},
		{13, `{"parallel":true,"commands":[{"broadcast":{"channels":["plain:room"],"data":2}},{"disconnect":{}}]}`},
		{13, `{"commands":{}}`}, {13, `[`}, {14, `{}`}, {0, ``}, {0, `{"channel":"chat"} x`},
		{15, `{"channel":"board:b","key":"k","data":{"n":1}}`}, {15, `{"channel":"board:b","key":"","data":1}`},
		{16, `{"channel":"board:b","key":"k"}`}, {17, `{"channel":"board:b","cursor":"x","limit":-1}`},
		{18, `{"channel":"board:b","since":{"offset":1,"epoch":"e"},"limit":1e12,"reverse":true}`},
		{19, `{"channel":"board:b"}`}, {20, `{"channel":"chat"}`},
	} {
		f.Add(uint8(s.method), false, []byte(s.body))
		f.Add(uint8(s.method), true, []byte(s.body))
	}
	handler := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, method uint8, transportMode bool, body []byte) {
		name := fuzzMethods[int(method)%len(fuzzMethods)]
		req := httptest.NewRequest(http.MethodPost, "/"+name, bytes.NewReader(body))
		if transportMode {
			req.Header.Set("X-Centrifugo-Error-Mode", "transport")
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: status %d, body %q", name, body, rec.Code, rec.Body)
		}
		if rec.Code != http.StatusOK {
			return
		}
		var answer struct {
			Result  json.RawMessage `json:"result"`
			Error   *fuzzError      `json:"error"`
			Replies []struct {
				Error *fuzzError `json:"error"`
			} `json:"replies"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
			t.Fatalf("%s %q: 200 with a body that is not JSON: %q", name, body, rec.Body)
		}
		errs := []*fuzzError{answer.Error}
		for _, r := range answer.Replies {
			errs = append(errs, r.Error)
		}
		for _, e := range errs {
			if e != nil && (e.Code == 100 || e.Message == "") {
				t.Fatalf("%s %q: error %+v in %q", name, body, e, rec.Body)
			}
		}
		if name != "batch" && (answer.Result == nil) == (answer.Error == nil) {
			t.Fatalf("%s %q: want a result or an error, got %q", name, body, rec.Body)
		}
	})
}

type fuzzError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// fuzzHandler is the API handler of a started hub that is shut down when
// the fuzz target ends. History expires within seconds so that a long
// run does not pile up streams for every channel name tried.
func fuzzHandler(f *testing.F) http.Handler {
	f.Helper()
	quiet := slog.New(slog.DiscardHandler)
	channels := testChannels()
	channels.WithoutNamespace.HistoryTTL = 2 * time.Second
	h := startHub(f, hub.Config{
		Engine:   memory.New(memory.Config{HistoryMetaTTL: 2 * time.Second}),
		Name:     "fuzz-node",
		Channels: channels,
		Logger:   quiet,
	})
	handler, err := api.NewHandler(h, api.Config{Insecure: true, Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	return handler
}
