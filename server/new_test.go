package server

import (
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestNewReleasesEngineOnFailure makes New fail after the engine has
// connected (tls_autocert.directory_ca_file holds no certificate, which
// config.Validate does not read and the listener's TLS step does) and
// checks that every connection the engine opened is closed: each engine
// reaches its service through a proxy that counts them.
func TestNewReleasesEngineOnFailure(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The PostgreSQL engine is left out: it connects only in Start.
	for _, name := range []string{"redis", "nats"} {
		configure := networkedEngines()[name]
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Client.Token.HMACSecretKey = "secret"
			configure(t, &cfg)
			proxy := throughProxy(t, &cfg)
			cfg.TLSAutocert.Enabled = true
			cfg.TLSAutocert.HostWhitelist = []string{"realtime.example.test"}
			cfg.TLSAutocert.DirectoryURL = "https://127.0.0.1:1/directory"
			cfg.TLSAutocert.DirectoryCAFile = notPEM
			_, err := New(cfg, slog.New(slog.DiscardHandler))
			if err == nil || !strings.Contains(err.Error(), "directory_ca_file") {
				t.Fatalf("New with a directory_ca_file holding no certificate: %v, want an error naming it", err)
			}
			if proxy.Accepted() == 0 {
				t.Fatalf("the %s engine never connected: the failure came before it, which tests nothing", name)
			}
			testenv.Eventually(t, "the engine's connections closed", 10*time.Second, func() bool { return proxy.Conns() == 0 })
		})
	}
}

// throughProxy points cfg's engine at a proxy to its service.
func throughProxy(t *testing.T, cfg *config.Config) *testenv.Proxy {
	t.Helper()
	var proxy *testenv.Proxy
	switch cfg.Engine.Type {
	case "redis":
		proxy = testenv.NewProxy(t, cfg.Engine.Redis.Address[0])
		cfg.Engine.Redis.Address = config.StringList{proxy.Addr()}
	case "nats":
		u, err := url.Parse(cfg.Engine.NATS.URL)
		if err != nil {
			t.Fatalf("engine.nats.url: %v", err)
		}
		proxy = testenv.NewProxy(t, u.Host)
		u.Host = proxy.Addr()
		cfg.Engine.NATS.URL = u.String()
	default:
		t.Fatalf("no proxy for engine %q", cfg.Engine.Type)
	}
	return proxy
}
