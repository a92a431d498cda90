package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// The Sentinels of the test set (scripts/services.sh) and its servers
// take no TLS. Sentinels dialed apart from the servers, without TLS: the
// engine's client finds the master through them and writes, every
// connection made by the dialer. With TLS for the servers alone, the
// dialer still gives a Sentinel a plain connection, which answers, and
// takes the master the Sentinels name for a server. (No TLS Sentinel runs
// here: TestSentinelDialerByAddress checks TLS by address on loopback.)
func TestSentinelTLSApart(t *testing.T) {
	base := sentinelOptions(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	plain := base
	plain.SeparateSentinelTLS = true
	_, c, err := plain.connect(ctx, "plain Sentinels")
	if err != nil {
		t.Fatalf("Sentinels apart, no TLS anywhere: %v", err)
	}
	defer c.Close()
	if err := c.Set(ctx, base.Prefix+":k", "v", time.Minute).Err(); err != nil {
		t.Fatalf("a write through the master found by the Sentinels: %v", err)
	}

	serversTLS := plain
	serversTLS.TLS = &tls.Config{ServerName: "redis.invalid", MinVersion: tls.VersionTLS12}
	dial := serversTLS.sentinelDialer()
	conn, err := dial(ctx, "tcp", base.Addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, ok := conn.(*tls.Conn); ok {
		t.Fatal("a Sentinel dialed with the servers' TLS")
	}
	sc := goredis.NewSentinelClient(&goredis.Options{Addr: base.Addrs[0], Protocol: 2, Dialer: dial})
	defer sc.Close()
	master, err := sc.GetMasterAddrByName(ctx, base.SentinelMaster).Result()
	if err != nil {
		t.Fatalf("a Sentinel over the dialer's connection: %v", err)
	}
	if addr := net.JoinHostPort(master[0], master[1]); isSentinel(ctx, base.Addrs, addr) {
		t.Fatalf("the master %s taken for a Sentinel", addr)
	}
}

// The dialer gives a configured Sentinel's address the Sentinel TLS and
// any other the servers': against a TLS listener and a plain one on
// loopback, each dial only succeeds with the right one.
func TestSentinelDialerByAddress(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	serverTLS := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	tlsAddr := srv.Listener.Addr().String()

	plainLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer plainLn.Close()
	go func() {
		for {
			conn, err := plainLn.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(conn, "+PONG\r\n")
			_ = conn.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(plainLn.Addr().String())

	for _, sentinel := range []string{plainLn.Addr().String(), "localhost:" + port} {
		o := Config{Addrs: []string{sentinel}, SentinelMaster: "m", SeparateSentinelTLS: true, TLS: serverTLS}
		dial := o.sentinelDialer()
		ctx := context.Background()
		conn, err := dial(ctx, "tcp", plainLn.Addr().String())
		if err != nil {
			t.Fatalf("Sentinel %s, dial: %v", sentinel, err)
		}
		got, _ := io.ReadAll(conn)
		_ = conn.Close()
		if string(got) != "+PONG\r\n" {
			t.Fatalf("Sentinel %s dialed with TLS: read %q", sentinel, got)
		}
		conn, err = dial(ctx, "tcp", tlsAddr)
		if err != nil {
			t.Fatalf("server %s with the servers' TLS: %v", tlsAddr, err)
		}
		if _, ok := conn.(*tls.Conn); !ok {
			t.Fatalf("server dialed without TLS: %T", conn)
		}
		_ = conn.Close()
	}
	if d := (Config{Addrs: []string{"a:1"}, SentinelMaster: "m"}).sentinelDialer(); d != nil {
		t.Fatal("a dialer without separate Sentinel TLS: go-redis's own should dial")
	}
}
