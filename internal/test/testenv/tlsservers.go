package testenv

import (
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/test/testcerts"
)

// StartTLSRedis runs a redis-server of the test's own that speaks only
// TLS, with a certificate from ca for "redis.internal" and 127.0.0.1, and
// requires client certificates from ca; it returns its address and is
// gone when t ends. The shared test Redis speaks plain TCP.
func StartTLSRedis(t testing.TB, ca *testcerts.CA) string {
	t.Helper()
	bin := Binary(t, "redis-server")
	srv := ca.ServerFor("redis", "redis.internal", "127.0.0.1")
	port := FreePort(t)
	p := StartProcess(t, exec.Command(bin,
		"--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", srv.CertFile, "--tls-key-file", srv.KeyFile,
		"--tls-ca-cert-file", ca.File, "--tls-auth-clients", "yes",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir()))
	return p.WaitListening(t, port, 15*time.Second)
}

// StartTLSNATS runs a nats-server of the test's own that requires TLS,
// with a certificate from ca for "nats.internal" and 127.0.0.1, and
// verifies client certificates from ca; it returns its URL and is gone
// when t ends.
func StartTLSNATS(t testing.TB, ca *testcerts.CA) string {
	t.Helper()
	bin := Binary(t, "nats-server")
	srv := ca.ServerFor("nats", "nats.internal", "127.0.0.1")
	port := FreePort(t)
	p := StartProcess(t, exec.Command(bin, "-a", "127.0.0.1", "-p", strconv.Itoa(port),
		"--tls", "--tlscert", srv.CertFile, "--tlskey", srv.KeyFile, "--tlsverify", "--tlscacert", ca.File))
	return "nats://" + p.WaitListening(t, port, 15*time.Second)
}
