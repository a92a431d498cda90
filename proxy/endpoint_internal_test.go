package proxy

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/tlsfiles"
)

// TestEndpointTLSFromFiles: an endpoint's TLS is read from its files, an
// https:// endpoint's from TLSFiles and a grpc:// one's from GRPC.TLS
// when enabled; none is nil, and a file that cannot be read is an error
// naming it, from New too.
func TestEndpointTLSFromFiles(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	for _, tc := range []struct {
		name       string
		e          Endpoint
		serverName string // "" wants no TLS
		err        string
	}{
		{"unreadable CA", Endpoint{Name: "a", URL: "https://backend/connect", TLSFiles: tlsfiles.Files{CAFile: "/nonexistent/ca.pem"}}, "", "ca_file: open /nonexistent/ca.pem"},
		{"no TLS section", Endpoint{Name: "a", URL: "https://backend/connect"}, "", ""},
		{"gRPC TLS", Endpoint{Name: "a", URL: "grpc://backend:10001", GRPC: GRPCOptions{TLS: tlsfiles.Client{Enabled: true, Files: tlsfiles.Files{CAFile: ca.File, ServerName: "backend.internal"}}}}, "backend.internal", ""},
		{"gRPC TLS off", Endpoint{Name: "a", URL: "grpc://backend:10001"}, "", ""},
		{"unreadable gRPC CA", Endpoint{Name: "a", URL: "grpc://backend:10001", GRPC: GRPCOptions{TLS: tlsfiles.Client{Enabled: true, Files: tlsfiles.Files{CAFile: "/nonexistent/grpc-ca.pem"}}}}, "", "ca_file: open /nonexistent/grpc-ca.pem"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.e.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			conf, err := tc.e.tlsConfig()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("tlsConfig: %v, want an error containing %q", err, tc.err)
				}
				if _, err := New(Config{Endpoints: []Endpoint{tc.e}}); err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("New: %v, want an error containing %q", err, tc.err)
				}
				return
			}
			switch {
			case err != nil:
				t.Fatalf("tlsConfig: %v", err)
			case tc.serverName == "" && conf != nil:
				t.Fatalf("tlsConfig: %+v, want none", conf)
			case tc.serverName != "" && (conf == nil || conf.ServerName != tc.serverName || conf.RootCAs == nil):
				t.Fatalf("tlsConfig: %+v, want server name %s and the CA", conf, tc.serverName)
			}
		})
	}
}
