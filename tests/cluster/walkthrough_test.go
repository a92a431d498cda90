package cluster_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

const (
	docPath = "../../docs/cluster.md"
	// The page's addresses, which the test moves to free ports.
	docNginx = "127.0.0.1:8000"
	docNode1 = "127.0.0.1:8001"
	docNode2 = "127.0.0.1:8002"
	channel  = "chat:lobby"
)

// nginxBinary finds nginx, skipping the test without it unless the run
// requires every service (then it fails: scripts/test.sh installs nginx).
func nginxBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if bin, err := exec.LookPath(p); err == nil {
			return bin
		}
	}
	if os.Getenv(testenv.RequireServices) == "1" {
		t.Fatalf("nginx is not installed and %s=1 (Debian: apt install nginx)", testenv.RequireServices)
	}
	t.Skip("nginx is not installed (Debian: apt install nginx)")
	return ""
}

// startNginx runs nginx in the foreground, as one process, with the page's
// server configuration included in a main configuration whose files all
// live under a temporary prefix.
func startNginx(t *testing.T, bin, serverConf string) *proc {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "herald.conf"), []byte(serverConf), 0o644); err != nil {
		t.Fatal(err)
	}
	main := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 1024; }
http {
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/herald.conf;
}
`, dir)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	test, err := exec.Command(bin, "-t", "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", conf).CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -t with the page's configuration: %v\n%s", err, test)
	}
	p := startProc(t, "nginx", bin, []string{"-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", conf}, nil)
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.stop(t, syscall.SIGQUIT, 10*time.Second)
		}
		if t.Failed() {
			errs, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("--- nginx error.log:\n%s", errs)
		}
	})
	return p
}

// awaitListening waits for addr to accept a connection.
func awaitListening(t *testing.T, p *proc, addr string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before listening on %s", p.name, p.err, addr)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s is not listening on %s", p.name, addr)
}

// TestClusterWalkthrough does what docs/cluster.md says, with its blocks.
func TestClusterWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two herald processes, PostgreSQL and nginx")
	}
	nginx := nginxBinary(t)
	dsn := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
	testenv.LockPostgres(t)
	bin := buildHerald(t)

	blocks := docBlocks(t, docPath)
	ports := freePorts(t, 3)
	lb, n1, n2 := addr(ports[0]), addr(ports[1]), addr(ports[2])

	// The page's herald.yaml, as is: the test's database comes from the
	// environment, which overrides the file, in a schema of its own.
	dir := t.TempDir()
	configFile := filepath.Join(dir, "herald.yaml")
	if err := os.WriteFile(configFile, []byte(need(t, blocks, "herald.yaml")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(configFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the page's herald.yaml: %v", err)
	}
	if cfg.Engine.Type != "postgres" || len(cfg.WebSocket.TrustedProxies) == 0 {
		t.Fatalf("the page's herald.yaml should run the postgres engine behind trusted proxies: %+v", cfg.Engine)
	}
	schema := "walkthrough_" + strconv.Itoa(os.Getpid())
	dropSchema(t, dsn, schema)
	t.Cleanup(func() { dropSchema(t, dsn, schema) })
	env := []string{
		config.EnvName("engine.postgres.dsn") + "=" + dsn,
		config.EnvName("engine.postgres.schema") + "=" + schema,
	}

	args1 := commandArgs(t, "node1", need(t, blocks, "node1"))
	args2 := commandArgs(t, "node2", need(t, blocks, "node2"))
	for _, args := range [][]string{args1, args2} {
		for i, a := range args {
			if a == "herald.yaml" {
				args[i] = configFile
			}
		}
	}
	args1 = strings.Fields(replaceAll(t, "node1 command", strings.Join(args1, " "), docNode1, n1))
	args2 = strings.Fields(replaceAll(t, "node2 command", strings.Join(args2, " "), docNode2, n2))

	node1 := startProc(t, "node1", bin, args1, env)
	awaitHTTP(t, node1, "http://"+n1+"/readyz", 200, 60*time.Second)
	node2 := startProc(t, "node2", bin, args2, env)
	awaitHTTP(t, node2, "http://"+n2+"/readyz", 200, 60*time.Second)

	serverConf := replaceAll(t, "nginx configuration", need(t, blocks, "nginx.conf"),
		docNginx, lb, docNode1, n1, docNode2, n2)
	ngx := startNginx(t, nginx, serverConf)
	awaitListening(t, ngx, lb)

	secret, key := cfg.Client.Token.HMACSecretKey, cfg.HTTPAPI.Key
	wsURL := "ws://" + lb + "/connection/websocket"
	api1 := "http://" + n1

	// Both nodes see each other (heartbeats through PostgreSQL).
	names := awaitNodes(t, api1, key, "node1", "node2")

	// Two clients through nginx: least_conn puts one on each node.
	alice, _, err := dialClient(wsURL, secret, "alice", channel, nil)
	if err != nil {
		t.Fatalf("alice through nginx: %v", err)
	}
	defer alice.Close()
	bob, _, err := dialClient(wsURL, secret, "bob", channel, nil)
	if err != nil {
		t.Fatalf("bob through nginx: %v", err)
	}
	defer bob.Close()
	where := userNodes(t, api1, key, names)
	if where["alice"] == where["bob"] || where["alice"] == "" || where["bob"] == "" {
		t.Fatalf("want alice and bob on different nodes through nginx, got %v", where)
	}
	onNode2, onNode1 := alice, bob
	if where["bob"] == "node2" {
		onNode2, onNode1 = bob, alice
	}

	// A message crosses nodes: published on node1, received on node2 too.
	api(t, api1, key, "publish", map[string]any{"channel": channel, "data": map[string]string{"text": "hello from node1"}}, nil)
	onNode1.awaitPub(t, "hello from node1")
	onNode2.awaitPub(t, "hello from node1")

	// SSE through nginx: the stream's events reach the client while it
	// stays open, whichever node it landed on.
	sse := dialSSE(t, "http://"+lb, secret, "dave", []string{channel})
	api(t, api1, key, "publish", map[string]any{"channel": channel, "data": map[string]string{"text": "to sse"}}, nil)
	sse.await(t, "to sse")
	sse.resp.Body.Close()
	for _, c := range []*wsClient{onNode1, onNode2} {
		c.awaitPub(t, "to sse")
	}

	// Drain node2: its client is closed with 3001 and moves to node1
	// through nginx, recovering what was published while it moved.
	if err := node2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := onNode2.awaitClose(t, cfg.Shutdown.DrainWindow+10*time.Second); code != 3001 {
		t.Fatalf("the drained node closed its client with %d, want 3001", code)
	}
	onNode2.Close()
	api(t, api1, key, "publish", map[string]any{"channel": channel, "data": map[string]string{"text": "while moving"}}, nil)
	onNode1.awaitPub(t, "while moving")
	moved, sub := reconnect(t, wsURL, secret, onNode2)
	defer moved.Close()
	if !sub.Subscribe.Recovered || len(sub.Subscribe.Publications) != 1 ||
		!strings.Contains(string(sub.Subscribe.Publications[0].Data), "while moving") {
		t.Fatalf("the moved client should recover the one publication it missed: %+v", sub.Subscribe)
	}
	if err := node2.stop(t, syscall.SIGTERM, cfg.Shutdown.Timeout+10*time.Second); err != nil {
		t.Fatalf("node2 after its drain: %v", err)
	}
	if w := userNodes(t, api1, key, names); w[onNode2.user] != "node1" {
		t.Fatalf("after the drain %s should be on node1: %v", onNode2.user, w)
	}

	// Start node2 again with the page's command: it takes new clients
	// through nginx again (least_conn sends the next one to it, once nginx
	// tries it again after fail_timeout), and messages cross to it.
	node2 = startProc(t, "node2-restarted", bin, args2, env)
	awaitHTTP(t, node2, "http://"+n2+"/readyz", 200, 60*time.Second)
	// The restarted node has a new id: learn it once node1 sees it.
	names = awaitNewNode(t, api1, key, names, "node2")
	carol := awaitClientOn(t, wsURL, secret, api1, key, names, "node2")
	defer carol.Close()
	api(t, api1, key, "publish", map[string]any{"channel": channel, "data": map[string]string{"text": "after the restart"}}, nil)
	carol.awaitPub(t, "after the restart")
	moved.awaitPub(t, "after the restart")
	onNode1.awaitPub(t, "after the restart")

	for _, p := range []*proc{node1, node2} {
		if err := p.stop(t, syscall.SIGTERM, cfg.Shutdown.Timeout+10*time.Second); err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
	}
}

// reconnect dials through nginx until the client is connected again, as
// an SDK does after a 3001 close, with recovery from its last offset.
func reconnect(t *testing.T, url, secret string, old *wsClient) (*wsClient, *jsonclient.Message) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		c, sub, err := dialClient(url, secret, old.user, channel, old)
		if err == nil {
			return c, sub
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s could not reconnect through nginx: %v", old.user, last)
	return nil, nil
}

// awaitClientOn connects new clients through nginx until one lands on
// node (at most 20 tries, as nginx may skip a node for fail_timeout).
func awaitClientOn(t *testing.T, url, secret, apiBase, key string, names map[string]string, node string) *wsClient {
	t.Helper()
	for i := range 20 {
		user := fmt.Sprintf("carol%d", i)
		c, _, err := dialClient(url, secret, user, channel, nil)
		if err != nil {
			t.Fatalf("%s through nginx: %v", user, err)
		}
		if userNodes(t, apiBase, key, names)[user] == node {
			return c
		}
		c.Close()
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("no new connection through nginx reached %s", node)
	return nil
}

// awaitNodes waits until the API lists every named node, and returns the
// names by node id.
func awaitNodes(t *testing.T, base, key string, want ...string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var info struct {
			Nodes []struct{ UID, Name string } `json:"nodes"`
		}
		api(t, base, key, "info", map[string]any{}, &info)
		names := map[string]string{}
		seen := map[string]bool{}
		for _, n := range info.Nodes {
			names[n.UID] = n.Name
			seen[n.Name] = true
		}
		all := true
		for _, w := range want {
			all = all && seen[w]
		}
		if all {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster lists %v, want %v", info.Nodes, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// awaitNewNode waits until the API lists a node named name with an id not
// in known (a restarted node), and returns the names by id.
func awaitNewNode(t *testing.T, base, key string, known map[string]string, name string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		names := awaitNodes(t, base, key, name)
		for id, n := range names {
			if _, old := known[id]; n == name && !old {
				return names
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new node %q joined; the cluster lists %v", name, names)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// userNodes maps each connected user to the name of its node.
func userNodes(t *testing.T, base, key string, names map[string]string) map[string]string {
	t.Helper()
	var res struct {
		Connections []struct{ User, Node string } `json:"connections"`
	}
	api(t, base, key, "connections", map[string]any{}, &res)
	out := map[string]string{}
	for _, c := range res.Connections {
		out[c.User] = names[c.Node]
	}
	return out
}

func dropSchema(t *testing.T, dsn, schema string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to drop schema %s: %v", schema, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
	}
}
