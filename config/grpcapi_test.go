package config

import (
	"slices"
	"testing"
)

// TestGRPCAPIProblems: an enabled gRPC API needs a key (or
// http_api.insecure) and a port; a disabled one is not checked for them.
func TestGRPCAPIProblems(t *testing.T) {
	keys := func(c Config) []string {
		var out []string
		for _, p := range c.grpcAPIProblems() {
			out = append(out, p.Key)
		}
		return out
	}
	c := Default()
	if got := keys(c); len(got) != 0 {
		t.Fatalf("default: %v", got)
	}
	c.GRPCAPIConfig.Enabled = true
	c.GRPCAPIConfig.Port = 65536
	c.GRPCAPIConfig.MaxReceiveMessageSize = -1
	c.GRPCAPIConfig.ErrorMode = "http"
	c.GRPCAPIConfig.ReadTimeout = -1
	c.GRPCAPIConfig.MaxConnectionsPerAddress = -2
	c.GRPCAPIConfig.SendTimeout = -1
	c.GRPCAPIConfig.MaxConcurrentStreams = -1
	if got := keys(c); !slices.Equal(got, []string{"grpc_api.read_timeout", "grpc_api.send_timeout", "grpc_api.max_concurrent_streams", "grpc_api.max_connections_per_address", "grpc_api.max_receive_message_size", "grpc_api.error_mode", "grpc_api.key", "grpc_api.port"}) {
		t.Fatalf("enabled without a key or port: %v", got)
	}
	c = Default()
	c.GRPCAPIConfig.Enabled = true
	c.HTTPAPI.Insecure = true
	if got := keys(c); len(got) != 0 {
		t.Fatalf("enabled with http_api.insecure: %v", got)
	}
	if g := c.GRPCAPI(); !g.Insecure {
		t.Fatalf("http_api.insecure without grpc_api.key: %+v", g)
	}
	c.GRPCAPIConfig.Key = "k"
	if g := c.GRPCAPI(); g.Insecure || g.Key != "k" {
		t.Fatalf("a grpc_api.key is required even with http_api.insecure: %+v", g)
	}
	// Loopback unless set: the API is for the operator's backends.
	if got := c.GRPCAPIConfig.ListenAddress(); got != "127.0.0.1:10000" {
		t.Fatalf("listen address %q", got)
	}
}

// TestHandlerPrefixProblems: http_api.handler_prefix must be a path of
// its own.
func TestHandlerPrefixProblems(t *testing.T) {
	for prefix, ok := range map[string]bool{
		"": true, "/api": true, "/centrifugo/api": true, "/api/": true,
		"api": false, "/": false, "/a b": false, "/metrics": false, "/connection": false,
		"/connection/api": true, "/connection/websocket": false, "/emulation/x": true, "/admin": false,
		"/admin/x": false, "/healthz": false, "/api/../x": false,
	} {
		c := Default()
		c.Admin.UI.Enabled, c.Admin.UI.Insecure = true, true
		c.HTTPAPI.HandlerPrefix = prefix
		var keys []string
		c.pathProblems(func(key, _ string, _ ...any) { keys = append(keys, key) })
		if ok != (len(keys) == 0) {
			t.Errorf("handler_prefix %q: problems %v", prefix, keys)
		}
	}
	c := Default()
	c.HTTPAPI.HandlerPrefix = "/centrifugo/api/"
	if got := c.HTTPAPI.Prefix(); got != "/centrifugo/api" {
		t.Errorf("Prefix() = %q", got)
	}
}

// TestGRPCAPIAddress: the gRPC API listens on loopback unless an address
// is set; an explicit empty one is every interface, as before.
func TestGRPCAPIAddress(t *testing.T) {
	for doc, want := range map[string]string{
		"grpc_api: {enabled: true, key: k}":                    "127.0.0.1:10000",
		"grpc_api: {enabled: true, key: k, address: \"\"}":     ":10000",
		"grpc_api: {enabled: true, key: k, address: 0.0.0.0}":  "0.0.0.0:10000",
		"grpc_api: {enabled: true, key: k, address: 10.0.0.5}": "10.0.0.5:10000",
	} {
		c, err := Parse([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if got := c.GRPCAPIConfig.ListenAddress(); got != want {
			t.Errorf("%s: listens on %q, want %q", doc, got, want)
		}
	}
}
