package server

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/heraldhq/herald/api/grpcapi"
	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/transport/tlsconf"
)

const grpcTestKey = "grpc-test-key"

// grpcClient dials s's gRPC API with a client generated from api.proto.
func grpcClient(t *testing.T, s *Server) apiproto.CentrifugoApiClient {
	t.Helper()
	conn, err := grpc.NewClient(s.GRPCAPIAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return apiproto.NewCentrifugoApiClient(conn)
}

// withKey is ctx with the API key metadata Centrifugo's gRPC API expects.
func withKey(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "apikey "+key)
}

// TestGRPCAPIPostgresCluster: on two PostgreSQL nodes, a Go client
// generated from api.proto publishes and broadcasts through node 1 to a
// subscriber on node 2, reads presence and history across the nodes, and
// disconnects the user on node 2; a wrong key is refused.
func TestGRPCAPIPostgresCluster(t *testing.T) {
	c := startPGCluster(t, 2, func(cfg *config.Config) {
		cfg.GRPCAPIConfig = config.GRPCAPIConfig{Enabled: true, Address: "127.0.0.1", Port: 0, Config: grpcapi.Config{Key: grpcTestKey}}
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{
			AllowSubscribeForClient: true, Presence: true,
			HistorySize: 10, HistoryTTL: time.Duration(time.Minute),
		}
	})
	n1, n2 := c.nodes[0], c.nodes[1]
	if n1.GRPCAPIAddr() == "" || n1.GRPCAPIAddr() == n2.GRPCAPIAddr() {
		t.Fatalf("gRPC API addresses %q and %q", n1.GRPCAPIAddr(), n2.GRPCAPIAddr())
	}
	g1, g2 := grpcClient(t, n1), grpcClient(t, n2)
	ctx := withKey(t.Context(), grpcTestKey)

	if _, err := g1.Info(t.Context(), &apiproto.InfoRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("info without a key: want Unauthenticated, got %v", err)
	}
	if _, err := g1.Info(withKey(t.Context(), "wrong"), &apiproto.InfoRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("info with a wrong key: want Unauthenticated, got %v", err)
	}
	testenv.Eventually(t, "node 1's gRPC info to list both nodes", 15*time.Second, func() bool {
		res, err := g1.Info(ctx, &apiproto.InfoRequest{})
		return err == nil && len(res.GetResult().GetNodes()) == 2
	})

	bob := mustDial(t, n2, "bob")
	bob.mustSubscribe(t, "room")
	pub, err := g1.Publish(ctx, &apiproto.PublishRequest{Channel: "room", Data: []byte(`{"via":"grpc"}`)})
	if err != nil || pub.Error != nil {
		t.Fatalf("publish: %v, %v", pub, err)
	}
	p := bob.awaitPush(t, "the gRPC publication (node 1 → node 2)", 10*time.Second, func(p *jsonclient.Push) bool { return p.Pub != nil })
	if string(p.Pub.Data) != `{"via":"grpc"}` {
		t.Fatalf("bob got %s", p.Pub.Data)
	}
	bc, err := g1.Broadcast(ctx, &apiproto.BroadcastRequest{Channels: []string{"room", "other"}, Data: []byte(`{"n":2}`)})
	if err != nil || bc.Error != nil || len(bc.Result.GetResponses()) != 2 || bc.Result.Responses[0].Error != nil {
		t.Fatalf("broadcast: %v, %v", bc, err)
	}
	bob.awaitPush(t, "the gRPC broadcast (node 1 → node 2)", 10*time.Second, func(p *jsonclient.Push) bool { return p.Pub != nil && string(p.Pub.Data) == `{"n":2}` })

	pr, err := g1.Presence(ctx, &apiproto.PresenceRequest{Channel: "room"})
	if err != nil || pr.Error != nil || len(pr.Result.GetPresence()) != 1 || pr.Result.Presence[bob.client].GetUser() != "bob" {
		t.Fatalf("presence through node 1 of bob on node 2: %v, %v", pr, err)
	}
	hist, err := g2.History(ctx, &apiproto.HistoryRequest{Channel: "room", Limit: -1})
	if err != nil || hist.Error != nil || len(hist.Result.GetPublications()) != 2 || hist.Result.Offset != 2 {
		t.Fatalf("history through node 2: %v, %v", hist, err)
	}
	for i, want := range []string{`{"via":"grpc"}`, `{"n":2}`} {
		if got := string(hist.Result.Publications[i].Data); got != want {
			t.Errorf("history[%d] = %s, want %s", i, got, want)
		}
	}

	dr, err := g1.Disconnect(ctx, &apiproto.DisconnectRequest{User: "bob", Disconnect: &apiproto.Disconnect{Code: 4000, Reason: "grpc says bye"}})
	if err != nil || dr.Error != nil {
		t.Fatalf("disconnect: %v, %v", dr, err)
	}
	code, err := bob.AwaitClose(10 * time.Second)
	if err != nil || code != 4000 {
		t.Fatalf("bob on node 2: close %d, %v; want 4000", code, err)
	}
	// A status set through node 2 is read through node 1 (PostgreSQL
	// keeps it); a method Herald lacks answers 108.
	un, err := g2.UpdateUserStatus(ctx, &apiproto.UpdateUserStatusRequest{Users: []string{"bob"}, State: "away"})
	if err != nil || un.GetError() != nil {
		t.Fatalf("update_user_status: %v, %v", un, err)
	}
	st, err := g1.GetUserStatus(ctx, &apiproto.GetUserStatusRequest{Users: []string{"bob"}})
	if err != nil || st.GetError() != nil || len(st.GetResult().GetStatuses()) != 1 || st.Result.Statuses[0].State != "away" {
		t.Fatalf("get_user_status through the other node: %v, %v", st, err)
	}
	dl, err := g2.DeviceList(ctx, &apiproto.DeviceListRequest{})
	if err != nil || dl.GetError().GetCode() != 108 {
		t.Fatalf("device_list: want error 108, got %v, %v", dl, err)
	}
}

// TestGRPCAPITLS: with grpc_api.tls the gRPC API serves TLS from the
// certificate files (and reloads them with the other listeners'); a
// plaintext client is not served.
func TestGRPCAPITLS(t *testing.T) {
	ca := testcerts.NewCA(t, "grpc-api")
	pair := ca.Server("grpc-api")
	cfg := config.Default()
	cfg.GRPCAPIConfig = config.GRPCAPIConfig{
		Enabled: true, Address: "127.0.0.1", Config: grpcapi.Config{Key: grpcTestKey},
		TLS: tlsconf.Config{CertFile: pair.CertFile, KeyFile: pair.KeyFile},
	}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	ctx := withKey(t.Context(), grpcTestKey)

	conn, err := grpc.NewClient(s.GRPCAPIAddr(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: ca.Pool})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if res, err := apiproto.NewCentrifugoApiClient(conn).Info(ctx, &apiproto.InfoRequest{}); err != nil || len(res.GetResult().GetNodes()) != 1 {
		t.Fatalf("info over TLS: %v, %v", res, err)
	}
	if _, err := grpcClient(t, s).Info(ctx, &apiproto.InfoRequest{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("plaintext client: want Unavailable, got %v", err)
	}
	if err := s.ReloadTLS(); err != nil {
		t.Fatalf("reload: %v", err)
	}
}

// TestSessionTargetsAcrossNodes: unsubscribe and disconnect with the
// session of an HTTP-streaming connection held by node 1, sent to node 2's
// HTTP and gRPC APIs, act on that connection only.
func TestSessionTargetsAcrossNodes(t *testing.T) {
	c := startPGCluster(t, 2, func(cfg *config.Config) {
		cfg.GRPCAPIConfig = config.GRPCAPIConfig{Enabled: true, Address: "127.0.0.1", Config: grpcapi.Config{Key: grpcTestKey}}
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
	})
	n1, n2 := c.nodes[0], c.nodes[1]
	testenv.Eventually(t, "both nodes to know each other", 15*time.Second, func() bool {
		return len(n1.Hub().Nodes()) == 2 && len(n2.Hub().Nodes()) == 2
	})
	s1 := mustOpenStream(t, n1, HTTPStreamPath, "alice")
	s2 := mustOpenStream(t, n1, HTTPStreamPath, "alice")
	for _, s := range []*httpStreamClient{s1, s2} {
		s.emulate(n1, `{"id":2,"subscribe":{"channel":"room"}}`)
		s.awaitMessage(`{"id":2,"subscribe":{`)
	}

	if body := apiCall(t, n2, "unsubscribe", `{"user":"alice","channel":"room","session":"`+s1.session+`"}`); body != `{"result":{}}` {
		t.Fatalf("unsubscribe by session: %s", body)
	}
	s1.awaitMessage(`"unsubscribe":{"code":2000`)
	// s2 is still subscribed: a publication reaches it first.
	apiCall(t, n2, "publish", `{"channel":"room","data":{"n":1}}`)
	if msg := string(s2.next()); !strings.Contains(msg, `"pub":{"data":{"n":1}`) {
		t.Fatalf("s2 after s1's unsubscribe: %s", msg)
	}

	res, err := grpcClient(t, n2).Disconnect(withKey(t.Context(), grpcTestKey), &apiproto.DisconnectRequest{
		User: "alice", Session: s2.session, Disconnect: &apiproto.Disconnect{Code: 4011, Reason: "by session"},
	})
	if err != nil || res.Error != nil {
		t.Fatalf("disconnect by session over gRPC: %v, %v", res, err)
	}
	s2.awaitMessage(`{"push":{"disconnect":{"code":4011,"reason":"by session"}}}`)
	// s1, unsubscribed but not disconnected, still answers commands.
	s1.emulate(n2, `{"id":3,"subscribe":{"channel":"other"}}`)
	s1.awaitMessage(`{"id":3,"subscribe":{`)
}
