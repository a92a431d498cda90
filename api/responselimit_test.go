package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
)

// responseLimit is the MaxResponseSize of these tests, and slack what an
// error answer may add to it.
const (
	responseLimit = 256 << 10
	slack         = 1 << 10
)

// fillStream publishes n publications of size bytes each into ch.
func fillStream(t *testing.T, h *hub.Hub, ch string, n, size int) {
	t.Helper()
	data := []byte(`"` + strings.Repeat("x", size-2) + `"`)
	for i := range n {
		if _, err := h.Publish(context.Background(), ch, data, hub.PublishOptions{}); err != nil {
			t.Fatalf("publication %d: %v", i, err)
		}
	}
}

// limitError requires body to be error 106 naming max_response_size and
// containing hint.
func limitError(t *testing.T, what, body, hint string) {
	t.Helper()
	var res struct {
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("%s: %.200s…: %v", what, body, err)
	}
	checkLimitError(t, what, res.Error != nil, func() (int, string) { return res.Error.Code, res.Error.Message }, len(body))
	if !strings.Contains(res.Error.Message, hint) {
		t.Fatalf("%s: %q does not say %q", what, res.Error.Message, hint)
	}
}

func checkLimitError(t *testing.T, what string, isErr bool, get func() (int, string), size int) {
	t.Helper()
	if size > responseLimit+slack {
		t.Fatalf("%s: a response of %d bytes, over the limit of %d", what, size, responseLimit)
	}
	if !isErr {
		t.Fatalf("%s: a result of %d bytes, want error 106", what, size)
	}
	code, msg := get()
	if code != 106 || !strings.Contains(msg, "max_response_size") || !strings.Contains(msg, fmt.Sprint(responseLimit)) {
		t.Fatalf("%s: error %d %q, want 106 naming http_api.max_response_size and %d", what, code, msg, responseLimit)
	}
}

// TestHistoryResponseBounded: history with limit -1 of a stream of 2,000
// × 4 KB (8 MB) answered the whole stream; with MaxResponseSize it is
// error 106 saying how many publications fit, over /api/history, the
// single endpoint and a batch, while a read that fits is answered whole.
func TestHistoryResponseBounded(t *testing.T) {
	n := startNode(t, api.Config{MaxResponseSize: responseLimit})
	fillStream(t, n.hub, "big:feed", 2000, 4<<10)

	for _, req := range []string{
		`{"channel":"big:feed","limit":-1}`,
		`{"channel":"big:feed","limit":-1,"reverse":true}`,
		`{"channel":"big:feed","limit":1000}`,
		`{"channel":"big:feed","limit":-1,"since":{"offset":100,"epoch":""}}`,
	} {
		limitError(t, "history "+req, n.call(t, "history", req), "page with since")
	}
	// The count the error names fits.
	var fit int
	body := n.call(t, "history", `{"channel":"big:feed","limit":-1}`)
	if _, err := fmt.Sscanf(body[strings.Index(body, "ask with a limit of at most "):], "ask with a limit of at most %d", &fit); err != nil || fit < 10 {
		t.Fatalf("the error names no usable limit: %s (%v)", body, err)
	}
	got := n.call(t, "history", fmt.Sprintf(`{"channel":"big:feed","limit":%d}`, fit))
	if strings.Count(got, `"offset"`) != fit+1 || len(got) > responseLimit {
		t.Fatalf("history with the limit the error named (%d): %d bytes, %d offsets", fit, len(got), strings.Count(got, `"offset"`))
	}

	legacy := n.call(t, "", `{"id":7,"method":"history","params":{"channel":"big:feed","limit":-1}}`)
	limitError(t, "single endpoint", legacy, "page with since")

	batch := n.call(t, "batch", `{"commands":[{"history":{"channel":"big:feed","limit":-1}},{"history":{"channel":"big:feed","limit":2}}]}`)
	var res struct{ Replies []json.RawMessage }
	if err := json.Unmarshal([]byte(batch), &res); err != nil || len(res.Replies) != 2 {
		t.Fatalf("batch: %.300s (%v)", batch, err)
	}
	limitError(t, "batch reply", string(res.Replies[0]), "page with since")
	if !strings.Contains(string(res.Replies[1]), `"publications":[{`) {
		t.Fatalf("the batch's second read, which fits: %.300s", res.Replies[1])
	}
}

// TestPresenceResponseBounded: the presence of a channel whose clients'
// info passes MaxResponseSize is error 106 pointing at presence_stats and
// connections; presence_stats still answers.
func TestPresenceResponseBounded(t *testing.T) {
	n := startNode(t, api.Config{MaxResponseSize: responseLimit})
	info := json.RawMessage(`"` + strings.Repeat("i", 30<<10) + `"`)
	const clients = 10
	for i := range clients {
		c := n.dialWith(t, auth.ConnectClaims{User: fmt.Sprint("u", i), Info: info})
		c.subscribe("big:room")
	}
	limitError(t, "presence", n.call(t, "presence", `{"channel":"big:room"}`), "presence_stats")
	// connections pages by count; a page of large connections is
	// bounded too.
	limitError(t, "connections", n.call(t, "connections", `{"channel":"big:room","limit":1000}`), "smaller limit")
	if got := n.call(t, "connections", `{"channel":"big:room","limit":2}`); strings.Count(got, `"client"`) != 2 {
		t.Fatalf("a page of 2 connections: %.300s", got)
	}
	n.expect(t, "presence_stats", `{"channel":"big:room"}`, fmt.Sprintf(`{"result":{"num_clients":%d,"num_users":%d}}`, clients, clients))
}

// TestGRPCResponseBounded: the gRPC service answers the same reads with
// error 106 in the response (a 28-byte History request answered 200 MB
// before), alone and in a batch.
func TestGRPCResponseBounded(t *testing.T) {
	n := startNode(t, api.Config{MaxResponseSize: responseLimit})
	fillStream(t, n.hub, "big:feed", 2000, 4<<10)
	client := grpcClient(t, n.hub, api.Config{MaxResponseSize: responseLimit})
	ctx := context.Background()

	for _, req := range []*apiproto.HistoryRequest{
		{Channel: "big:feed", Limit: -1},
		{Channel: "big:feed", Limit: -1, Reverse: true},
	} {
		resp, err := client.History(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		checkLimitError(t, "gRPC History", resp.GetError() != nil, func() (int, string) {
			return int(resp.GetError().GetCode()), resp.GetError().GetMessage()
		}, proto.Size(resp))
		if resp.GetResult() != nil {
			t.Fatalf("gRPC History: a result with the error")
		}
	}
	resp, err := client.History(ctx, &apiproto.HistoryRequest{Channel: "big:feed", Limit: 20})
	if err != nil || resp.GetError() != nil || len(resp.GetResult().GetPublications()) != 20 {
		t.Fatalf("gRPC History of 20: %v, %v", resp, err)
	}

	batch, err := client.Batch(ctx, &apiproto.BatchRequest{Commands: []*apiproto.Command{
		{History: &apiproto.HistoryRequest{Channel: "big:feed", Limit: -1}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rep := batch.GetReplies()[0]
	checkLimitError(t, "gRPC batch", rep.GetError() != nil, func() (int, string) {
		return int(rep.GetError().GetCode()), rep.GetError().GetMessage()
	}, proto.Size(batch))
}

// grpcClient serves the gRPC service of h with cfg on loopback, without a
// key, and returns a client of it.
func grpcClient(t *testing.T, h *hub.Hub, cfg api.Config) apiproto.CentrifugoApiClient {
	t.Helper()
	svc, err := api.NewGRPCService(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	svc.Register(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		if err := <-served; err != nil {
			t.Errorf("gRPC serve: %v", err)
		}
	})
	return apiproto.NewCentrifugoApiClient(conn)
}

// readCounter counts the publications the engine's History returns.
type readCounter struct {
	engine.Engine
	read atomic.Int64
}

func (e *readCounter) History(ctx context.Context, ch string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	pubs, pos, err := e.Engine.History(ctx, ch, req)
	e.read.Add(int64(len(pubs)))
	return pubs, pos, err
}

// TestHistoryStopsReadingAtTheLimit: history with limit -1 does not load
// the whole stream to refuse it: it reads the engine a page at a time
// and stops within a page of the limit (it read all 2,000 publications,
// 8 MB, for a 256 KiB limit before).
func TestHistoryStopsReadingAtTheLimit(t *testing.T) {
	eng := &readCounter{Engine: memory.New(memory.Config{})}
	// The wrapper hides the memory engine's map state: no map namespace.
	channels := testChannels()
	channels.Namespaces = slices.DeleteFunc(channels.Namespaces, func(ns hub.Namespace) bool { return ns.SubscriptionType == hub.SubscriptionMap })
	h := startHub(t, hub.Config{Engine: eng, Channels: channels})
	fillStream(t, h, "big:feed", 2000, 4<<10)
	handler, err := api.NewHandler(h, api.Config{Insecure: true, MaxResponseSize: responseLimit})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/history", strings.NewReader(`{"channel":"big:feed","limit":-1}`)))
	limitError(t, "history", rec.Body.String(), "page with since")
	// 64 publications of 4 KB fit in 256 KiB; the page that passes the
	// limit is read whole.
	if got, most := eng.read.Load(), int64(responseLimit/(4<<10)+256); got > most {
		t.Fatalf("the engine returned %d publications for a read refused at the limit, want at most %d", got, most)
	}
}

// TestChannelsResponseBounded: channels whose names pass MaxResponseSize
// are error 106 pointing at a narrower pattern.
func TestChannelsResponseBounded(t *testing.T) {
	const limit = 1 << 10
	n := startNode(t, api.Config{MaxResponseSize: limit})
	for i := range 8 {
		n.dial(t, fmt.Sprint("u", i)).subscribe(fmt.Sprintf("big:%03d%s", i, strings.Repeat("c", 200)))
	}
	body := n.call(t, "channels", `{}`)
	if !strings.Contains(body, `"code":106`) || !strings.Contains(body, "narrower pattern") || !strings.Contains(body, "max_response_size") || len(body) > limit {
		t.Fatalf("channels past the limit: %s", body)
	}
	if got := n.call(t, "channels", `{"pattern":"big:000*"}`); !strings.Contains(got, `"num_clients":1`) {
		t.Fatalf("channels with a narrower pattern: %s", got)
	}
}
