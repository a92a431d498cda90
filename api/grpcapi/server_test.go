package grpcapi_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/grpcapi"
	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

const (
	testSecret = "grpcapi-test-secret"
	testKey    = "grpcapi-test-key"
)

// startHub starts a hub whose channels without a namespace keep history
// and presence.
func startHub(t *testing.T) *hub.Hub {
	t.Helper()
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	return hubtest.Start(t, hub.Config{
		Engine: memory.New(memory.Config{}), Tokens: v, Logger: slog.New(slog.DiscardHandler),
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, Presence: true, HistorySize: 10, HistoryTTL: time.Minute,
		}, Namespaces: []hub.Namespace{{Name: "bin", NamespaceOptions: hub.NamespaceOptions{
			HistorySize: 10, HistoryTTL: time.Minute, PublicationDataFormat: hub.DataFormatBinary,
		}}}},
	})
}

// serve starts the gRPC API of h with cfg on loopback and returns its
// address; it stops when the test ends.
func serve(t *testing.T, h *hub.Hub, cfg grpcapi.Config) string {
	t.Helper()
	s, err := grpcapi.New(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// keyAuth sends the API key as Centrifugo's documentation shows.
type keyAuth string

func (k keyAuth) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "apikey " + string(k)}, nil
}

func (keyAuth) RequireTransportSecurity() bool { return false }

// dial returns a client of addr; it is closed when the test ends.
func dial(t *testing.T, addr string, opts ...grpc.DialOption) apiproto.CentrifugoApiClient {
	t.Helper()
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(keyAuth(testKey))}
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return apiproto.NewCentrifugoApiClient(conn)
}

func ctx5s(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestMethods: a client generated from api.proto publishes, broadcasts,
// reads history and presence, and disconnects a user whose connection
// sees it; binary data passes through unchanged.
func TestMethods(t *testing.T) {
	h := startHub(t)
	c := dial(t, serve(t, h, grpcapi.Config{Key: testKey}))
	ctx := ctx5s(t)

	conn, _ := hubtest.Dial(h, protocol.TypeJSON)
	t.Cleanup(conn.Drop)
	ws := jsonclient.New(t, wire.Mem(conn), testSecret)
	clientID := ws.Connect("ann")["client"].(string)
	ws.MustSubscribe(2, "news", "")

	pub, err := c.Publish(ctx, &apiproto.PublishRequest{Channel: "news", Data: []byte(`{"n":1}`)})
	if err != nil || pub.Error != nil || pub.Result.GetOffset() != 1 || pub.Result.GetEpoch() == "" {
		t.Fatalf("publish: %v, %v", pub, err)
	}
	if m := ws.Next(); jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data")) != `{"n":1}` {
		t.Fatalf("subscriber got %v", m)
	}
	bc, err := c.Broadcast(ctx, &apiproto.BroadcastRequest{Channels: []string{"news", "other", "bad:ns"}, Data: []byte(`[2]`)})
	if err != nil || bc.Error != nil || len(bc.Result.GetResponses()) != 3 {
		t.Fatalf("broadcast: %v, %v", bc, err)
	}
	if r := bc.Result.Responses; r[0].Error != nil || r[1].Error != nil || r[2].GetError().GetCode() != uint32(protocol.ErrorUnknownChannel) {
		t.Fatalf("broadcast responses: %v", r)
	}
	ws.Next() // the broadcast
	// Binary data needs no base64 over gRPC.
	bin, err := c.Publish(ctx, &apiproto.PublishRequest{Channel: "bin:x", Data: []byte{0xff, 0x00}})
	if err != nil || bin.Error != nil {
		t.Fatalf("binary publish: %v, %v", bin, err)
	}
	binHist, err := c.History(ctx, &apiproto.HistoryRequest{Channel: "bin:x", Limit: 1})
	if err != nil || len(binHist.Result.GetPublications()) != 1 || string(binHist.Result.Publications[0].Data) != "\xff\x00" {
		t.Fatalf("binary history: %v, %v", binHist, err)
	}

	hist, err := c.History(ctx, &apiproto.HistoryRequest{Channel: "news", Limit: -1})
	if err != nil || hist.Error != nil {
		t.Fatalf("history: %v, %v", hist, err)
	}
	pubs := hist.Result.GetPublications()
	if len(pubs) != 2 || string(pubs[0].Data) != `{"n":1}` || string(pubs[1].Data) != `[2]` || hist.Result.Offset != 2 {
		t.Fatalf("history: %v", hist.Result)
	}

	pr, err := c.Presence(ctx, &apiproto.PresenceRequest{Channel: "news"})
	if err != nil || pr.Error != nil || pr.Result.Presence[clientID].GetUser() != "ann" {
		t.Fatalf("presence: %v, %v", pr, err)
	}
	ps, err := c.PresenceStats(ctx, &apiproto.PresenceStatsRequest{Channel: "news"})
	if err != nil || ps.Result.GetNumClients() != 1 || ps.Result.GetNumUsers() != 1 {
		t.Fatalf("presence stats: %v, %v", ps, err)
	}
	info, err := c.Info(ctx, &apiproto.InfoRequest{})
	if err != nil || len(info.Result.GetNodes()) != 1 || info.Result.Nodes[0].NumClients != 1 {
		t.Fatalf("info: %v, %v", info, err)
	}
	chans, err := c.Channels(ctx, &apiproto.ChannelsRequest{})
	if err != nil || chans.Result.GetChannels()["news"].GetNumClients() != 1 {
		t.Fatalf("channels: %v, %v", chans, err)
	}
	conns, err := c.Connections(ctx, &apiproto.ConnectionsRequest{User: "ann"})
	if err != nil || conns.Result.GetConnections()[clientID].GetUser() != "ann" {
		t.Fatalf("connections: %v, %v", conns, err)
	}
	if _, ok := conns.Result.Connections[clientID].GetState().GetChannels()["news"]; !ok {
		t.Fatalf("connections: %v without its channel", conns.Result)
	}

	// A server-side subscription with an override of the namespace.
	sub, err := c.Subscribe(ctx, &apiproto.SubscribeRequest{User: "ann", Channel: "forced",
		Override: &apiproto.SubscribeOptionOverride{ForceRecovery: &apiproto.BoolValue{Value: true}}})
	if err != nil || sub.Error != nil {
		t.Fatalf("subscribe: %v, %v", sub, err)
	}
	if m := ws.Next(); jsonclient.Path(m, "push", "subscribe", "recoverable") != true {
		t.Fatalf("subscribe with force_recovery: %v", m)
	}

	// The HTTP API's checks, with its codes and messages.
	bad, err := c.Publish(ctx, &apiproto.PublishRequest{Channel: "news"})
	if err != nil || bad.GetError().GetCode() != uint32(protocol.ErrorBadRequest) || !strings.Contains(bad.Error.Message, "data required") {
		t.Fatalf("publish without data: %v, %v", bad, err)
	}
	dr, err := c.Disconnect(ctx, &apiproto.DisconnectRequest{User: "ann", Disconnect: &apiproto.Disconnect{Code: 4001, Reason: "bye"}})
	if err != nil || dr.Error != nil || dr.Result == nil {
		t.Fatalf("disconnect: %v, %v", dr, err)
	}
	ws.ExpectClose(4001, "bye")
}

// TestBatch runs commands of every kind in order, with per-command errors,
// and refuses a batch over the limit as a whole.
func TestBatch(t *testing.T) {
	h := startHub(t)
	c := dial(t, serve(t, h, grpcapi.Config{Key: testKey, API: api.Config{MaxBatchCommands: 3}}))
	ctx := ctx5s(t)
	res, err := c.Batch(ctx, &apiproto.BatchRequest{Commands: []*apiproto.Command{
		{Publish: &apiproto.PublishRequest{Channel: "a", Data: []byte(`1`)}},
		{History: &apiproto.HistoryRequest{Channel: "a", Limit: 1}},
		{DeviceList: &apiproto.DeviceListRequest{}},
	}})
	if err != nil || len(res.Replies) != 3 {
		t.Fatalf("batch: %v, %v", res, err)
	}
	if r := res.Replies; r[0].GetPublish().GetOffset() != 1 || len(r[1].GetHistory().GetPublications()) != 1 ||
		r[2].GetError().GetCode() != uint32(protocol.ErrorNotAvailable) {
		t.Fatalf("batch replies: %v", r)
	}
	_, err = c.Batch(ctx, &apiproto.BatchRequest{Commands: make([]*apiproto.Command, 4)})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "limit of 3") {
		t.Fatalf("batch over the limit: %v", err)
	}
	// The replies are bounded by max_batch_response_size.
	small := dial(t, serve(t, h, grpcapi.Config{Key: testKey, API: api.Config{MaxBatchResponseSize: 30}}))
	res, err = small.Batch(ctx, &apiproto.BatchRequest{Commands: []*apiproto.Command{
		{Publish: &apiproto.PublishRequest{Channel: "a", Data: []byte(`2`)}},
		{Info: &apiproto.InfoRequest{}},
		{Publish: &apiproto.PublishRequest{Channel: "a", Data: []byte(`3`)}},
	}})
	if err != nil || res.Replies[0].GetPublish().GetOffset() != 2 ||
		res.Replies[1].GetError().GetCode() != uint32(protocol.ErrorLimitExceeded) || !strings.Contains(res.Replies[1].Error.Message, "reply is dropped") ||
		res.Replies[2].GetError().GetCode() != uint32(protocol.ErrorLimitExceeded) || !strings.Contains(res.Replies[2].Error.Message, "command not run") {
		t.Fatalf("batch over the response limit: %v, %v", res, err)
	}
	empty, err := c.Batch(ctx, &apiproto.BatchRequest{Commands: []*apiproto.Command{{}}})
	if err != nil || empty.Replies[0].GetError().GetCode() != uint32(protocol.ErrorMethodNotFound) {
		t.Fatalf("empty command: %v, %v", empty, err)
	}
}

// TestUnavailableMethods: the methods of api.proto Herald does not have
// answer 108 in the response, not a gRPC error.
func TestUnavailableMethods(t *testing.T) {
	h := startHub(t)
	c := dial(t, serve(t, h, grpcapi.Config{Key: testKey}))
	ctx := ctx5s(t)
	r1, err := c.DeviceList(ctx, &apiproto.DeviceListRequest{})
	if err != nil || r1.GetError().GetCode() != uint32(protocol.ErrorNotAvailable) {
		t.Fatalf("device_list: %v, %v", r1, err)
	}
	r2, err := c.SendPushNotification(ctx, &apiproto.SendPushNotificationRequest{})
	if err != nil || r2.GetError().GetCode() != uint32(protocol.ErrorNotAvailable) || !strings.Contains(r2.Error.Message, "send_push_notification") {
		t.Fatalf("send_push_notification: %v, %v", r2, err)
	}
	r3, err := c.Connections(ctx, &apiproto.ConnectionsRequest{Expression: "user == 'ann'"})
	if err != nil || r3.GetError().GetCode() != uint32(protocol.ErrorNotAvailable) {
		t.Fatalf("connections with an expression: %v, %v", r3, err)
	}
}

// TestAPIKey: a call without the key or with a wrong one is refused with
// Unauthenticated and does nothing.
func TestAPIKey(t *testing.T) {
	h := startHub(t)
	addr := serve(t, h, grpcapi.Config{Key: testKey})
	ctx := ctx5s(t)
	plain := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	for name, c := range map[string]apiproto.CentrifugoApiClient{
		"none":  dial(t, addr, plain...),
		"wrong": dial(t, addr, append(plain, grpc.WithPerRPCCredentials(keyAuth("nope")))...),
	} {
		_, err := c.Publish(ctx, &apiproto.PublishRequest{Channel: "news", Data: []byte(`{}`)})
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s key: want Unauthenticated, got %v", name, err)
		}
	}
	// Another scheme with the right key is refused too.
	c := dial(t, addr, plain...)
	md := metadata.Pairs("authorization", "bearer "+testKey)
	if _, err := c.Info(metadata.NewOutgoingContext(ctx, md), &apiproto.InfoRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("bearer scheme: want Unauthenticated, got %v", err)
	}
	hist, err := dial(t, addr).History(ctx, &apiproto.HistoryRequest{Channel: "news"})
	if err != nil || hist.Result.GetOffset() != 0 {
		t.Fatalf("a refused publish reached the channel: %v, %v", hist, err)
	}
	md = metadata.Pairs("authorization", "APIKEY "+testKey)
	if _, err := c.Info(metadata.NewOutgoingContext(ctx, md), &apiproto.InfoRequest{}); err != nil {
		t.Errorf("scheme in capitals: %v", err)
	}
	if _, err := grpcapi.New(h, grpcapi.Config{}); err == nil {
		t.Error("a server without a key (and not insecure) was made")
	}
}

// TestMaxReceiveMessageSize: a request over the limit is refused with
// ResourceExhausted and publishes nothing; one under it passes.
func TestMaxReceiveMessageSize(t *testing.T) {
	h := startHub(t)
	c := dial(t, serve(t, h, grpcapi.Config{Key: testKey, MaxReceiveMessageSize: 1024}))
	ctx := ctx5s(t)
	big := []byte(`"` + strings.Repeat("x", 2000) + `"`)
	if _, err := c.Publish(ctx, &apiproto.PublishRequest{Channel: "news", Data: big}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("oversized publish: want ResourceExhausted, got %v", err)
	}
	res, err := c.Publish(ctx, &apiproto.PublishRequest{Channel: "news", Data: []byte(`"small"`)})
	if err != nil || res.Result.GetOffset() != 1 {
		t.Fatalf("publish under the limit: %v, %v (offset 1 means the oversized one did not publish)", res, err)
	}
}

// TestTLS: with TLS on, a client that trusts the CA is served and a
// plaintext client is not.
func TestTLS(t *testing.T) {
	h := startHub(t)
	ca := testcerts.NewCA(t, "grpcapi")
	pair := ca.Server("grpc")
	addr := serve(t, h, grpcapi.Config{Key: testKey, TLS: &tls.Config{Certificates: []tls.Certificate{pair.Cert}, MinVersion: tls.VersionTLS12}})
	ctx := ctx5s(t)
	secure := dial(t, addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: ca.Pool})), grpc.WithPerRPCCredentials(keyAuth(testKey)))
	if res, err := secure.Info(ctx, &apiproto.InfoRequest{}); err != nil || len(res.Result.GetNodes()) != 1 {
		t.Fatalf("info over TLS: %v, %v", res, err)
	}
	if _, err := dial(t, addr).Info(ctx, &apiproto.InfoRequest{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("plaintext client: want Unavailable, got %v", err)
	}
}

// TestTransportErrorMode: in transport error mode (configured, or asked
// for per call) a response's error is the gRPC status of its code; batch
// replies keep theirs.
func TestTransportErrorMode(t *testing.T) {
	h := startHub(t)
	ctx := ctx5s(t)
	perCall := dial(t, serve(t, h, grpcapi.Config{Key: testKey}))
	always := dial(t, serve(t, h, grpcapi.Config{Key: testKey, ErrorMode: grpcapi.ErrorModeTransport}))
	ask := metadata.AppendToOutgoingContext(ctx, "x-centrifugo-error-mode", "transport")

	res, err := perCall.Publish(ctx, &apiproto.PublishRequest{Channel: "news"})
	if err != nil || res.GetError().GetCode() != uint32(protocol.ErrorBadRequest) {
		t.Fatalf("default mode: %v, %v", res, err)
	}
	for name, c := range map[string]struct {
		client apiproto.CentrifugoApiClient
		ctx    context.Context
	}{"per call": {perCall, ask}, "configured": {always, ctx}} {
		_, err := c.client.Publish(c.ctx, &apiproto.PublishRequest{Channel: "news"})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "data required") {
			t.Errorf("%s: publish without data: %v", name, err)
		}
		_, err = c.client.History(c.ctx, &apiproto.HistoryRequest{Channel: "nope:x"})
		if status.Code(err) != codes.NotFound {
			t.Errorf("%s: history of an unknown namespace: %v", name, err)
		}
		b, err := c.client.Batch(c.ctx, &apiproto.BatchRequest{Commands: []*apiproto.Command{{Publish: &apiproto.PublishRequest{Channel: "news"}}}})
		if err != nil || b.Replies[0].GetError().GetCode() != uint32(protocol.ErrorBadRequest) {
			t.Errorf("%s: batch: %v, %v", name, b, err)
		}
		if _, err := c.client.Info(c.ctx, &apiproto.InfoRequest{}); err != nil {
			t.Errorf("%s: info: %v", name, err)
		}
	}
	if _, err := grpcapi.New(h, grpcapi.Config{Key: testKey, ErrorMode: "http"}); err == nil {
		t.Error("error mode \"http\" was accepted")
	}
}

// TestReflection: with Reflection the reflection service lists the
// CentrifugoApi service to a caller with the key, and refuses one
// without it.
func TestReflection(t *testing.T) {
	h := startHub(t)
	addr := serve(t, h, grpcapi.Config{Key: testKey, Reflection: true})
	list := func(opts ...grpc.DialOption) ([]string, error) {
		conn, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx5s(t))
		if err != nil {
			return nil, err
		}
		if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			if errors.Is(err, io.EOF) {
				// The server ended the stream first (refused it): its
				// status comes with Recv, as grpc-go's SendMsg says.
				_, err = stream.Recv()
			}
			return nil, err
		}
		res, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		var names []string
		for _, s := range res.GetListServicesResponse().GetService() {
			names = append(names, s.GetName())
		}
		return names, stream.CloseSend()
	}
	names, err := list(grpc.WithPerRPCCredentials(keyAuth(testKey)))
	if err != nil || !slices.Contains(names, "centrifugal.centrifugo.api.CentrifugoApi") {
		t.Fatalf("services %v, %v", names, err)
	}
	if _, err := list(); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("without a key: want Unauthenticated, got %v", err)
	}
}

// TestSpans: with a tracer provider every call is a server span named
// after the method, continuing the caller's traceparent, and an error in
// the response marks it.
func TestSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	h := startHub(t)
	c := dial(t, serve(t, h, grpcapi.Config{Key: testKey, API: api.Config{TracerProvider: tp}}))
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := metadata.AppendToOutgoingContext(ctx5s(t), "traceparent", parent)
	if _, err := c.PresenceStats(ctx, &apiproto.PresenceStatsRequest{Channel: "news"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Publish(ctx, &apiproto.PublishRequest{Channel: "news"}); err != nil {
		t.Fatal(err)
	}
	ended := rec.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans, want 2", len(ended))
	}
	if s := ended[0]; s.Name() != "api.presence_stats" || s.Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Status().Code.String() == "Error" {
		t.Errorf("presence_stats span: %s, parent %s, status %v", s.Name(), s.Parent().TraceID(), s.Status())
	}
	if s := ended[1]; s.Name() != "api.publish" || s.Status().Code.String() != "Error" || !strings.Contains(s.Status().Description, "data required") {
		t.Errorf("publish span: %s, status %v", s.Name(), s.Status())
	}
}
