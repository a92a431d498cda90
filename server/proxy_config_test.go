package server

import (
	"github.com/heraldhq/herald/config"

	"strings"
	"testing"
)

// TestProxyConfigCheck: each mistake in the proxy configuration is
// reported with the key it is about.
func TestProxyConfigCheck(t *testing.T) {
	cases := []struct {
		yaml string
		want []string // key: message fragments, each must be reported
	}{
		{`
proxies:
  - name: a
    endpoint: http://localhost:3000/connect
client:
  proxy:
    connect: b
    refresh: a
`, []string{`client.proxy.connect: unknown proxy "b"`}},
		{`
proxies:
  - name: a
    endpoint: http://localhost/x
  - name: a
    endpoint: http://localhost/y
`, []string{`proxies[1].name: "a": another proxy has this name`}},
		{`
proxies:
  - name: a
    endpoint: ftp://localhost:1000
  - name: b
    endpoint: "http://"
  - name: c
    endpoint: "::nope"
  - endpoint: http://localhost/x
`, []string{"proxies[0].endpoint: \"ftp://localhost:1000\": want an http://, https:// or grpc:// endpoint", "proxies[1].endpoint: \"http://\": the endpoint has no host",
			"proxies[2].endpoint: \"::nope\" cannot be parsed", "proxies[3].name: required"}},
		{`
proxies:
  - name: a
    endpoint: http://localhost/x
    timeout: 61s
  - name: b
    endpoint: http://localhost/x
    http_headers: ["Bad Header"]
    static_http_headers:
      Content-Type: text/plain
`, []string{"proxies[0].timeout: 1m1s: longer than 1m0s", `proxies[1].http_headers[0]: "Bad Header" is not a valid HTTP header name`,
			"proxies[1].static_http_headers.Content-Type: Content-Type is always application/json"}},
		{`
proxies:
  - name: a
    endpoint: grpc://localhost
  - name: b
    endpoint: grpc://localhost:1000
    tls: {ca_file: ca.pem}
    static_http_headers: {X-Key: k}
    grpc_metadata: [X-Tenant]
  - name: c
    endpoint: https://localhost/x
    grpc:
      tls: {enabled: true}
      credentials_key: authorization
      compression: true
  - name: d
    endpoint: grpc://localhost:1000
    grpc:
      tls: {ca_file: ca.pem}
      credentials_value: v
`, []string{`proxies[0].endpoint: "grpc://localhost": a grpc:// endpoint needs a port`,
			"proxies[1].tls: for a grpc:// endpoint, TLS is set under grpc", "proxies[1].static_http_headers: HTTP headers do not apply to a grpc:// endpoint",
			`proxies[1].grpc_metadata[0]: "X-Tenant" is not a valid gRPC metadata key`,
			"proxies[2].grpc.tls: the endpoint is https://, not grpc://", "proxies[2].grpc.credentials_key: set for", "proxies[2].grpc.compression: set for",
			"proxies[3].grpc.tls.enabled: must be true", "proxies[3].grpc.credentials_key: required with credentials_value"}},
		{`
proxies:
  - name: web
    endpoint: http://localhost/x
  - name: g
    endpoint: grpc://localhost:1000
channel:
  without_namespace:
    subscribe_stream_proxy: web
  namespaces:
    - name: a
      subscribe_proxy: g
      subscribe_stream_proxy: g
    - name: b
      subscribe_check: "select true"
      subscribe_stream_proxy: g
    - name: c
      subscribe_stream_proxy: nope
    - name: d
      subscribe_stream_proxy_bidirectional: true
sql_auth:
  dsn: postgres://localhost/app
`, []string{`channel.without_namespace.subscribe_stream_proxy: proxy "web" is not a grpc:// endpoint`,
			"channel.namespaces[0].subscribe_stream_proxy: set together with subscribe_proxy",
			"channel.namespaces[1].subscribe_stream_proxy: set together with subscribe_check",
			`channel.namespaces[2].subscribe_stream_proxy: unknown proxy "nope"`,
			"channel.namespaces[3].subscribe_stream_proxy_bidirectional: set without subscribe_stream_proxy"}},
		{`
channel:
  without_namespace:
    subscribe_proxy: s
  namespaces:
    - name: chat
      publish_proxy: p
      sub_refresh_proxy: r
rpc:
  proxy: x
  namespaces:
    - name: ns
      proxy: y
    - name: ns
    - name: "a:b"
proxy_max_in_flight: -2
`, []string{`channel.without_namespace.subscribe_proxy: unknown proxy "s"`, `channel.namespaces[0].publish_proxy: unknown proxy "p"`,
			`channel.namespaces[0].sub_refresh_proxy: unknown proxy "r"`, `rpc.proxy: unknown proxy "x"`, `rpc.namespaces[0].proxy: unknown proxy "y"`,
			`rpc.namespaces[1].name: "ns": defined twice`, `rpc.namespaces[2].name: "a:b": a namespace name cannot contain ':'`,
			"proxy_max_in_flight: -2: want a positive number"}},
	}
	for i, tc := range cases {
		cfg, err := config.Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("case %d: parse: %v", i, err)
		}
		err = cfg.Validate()
		if err == nil {
			t.Fatalf("case %d: no problem found, want %v", i, tc.want)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("case %d: problems lack %q:\n%v", i, w, err)
			}
		}
	}
	// A complete configuration passes, and misspelt keys are caught.
	ok := `
proxies:
  - name: app
    endpoint: https://app.example.com/centrifugo
    timeout: 60s
    http_headers: [Cookie, Authorization]
    static_http_headers: {X-Key: k}
    binary_encoding: true
    include_connection_meta: true
  - name: grpc-app
    endpoint: grpc://app.example.com:10000
    http_headers: [Cookie]
    grpc_metadata: [x-tenant]
    grpc:
      tls: {enabled: true, server_name: app.internal}
      credentials_key: authorization
      credentials_value: Bearer k
      compression: true
client:
  allow_anonymous_connect_without_token: false
  proxy: {connect: app, refresh: grpc-app}
`
	cfg, err := config.Parse([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("valid proxy configuration refused: %v", err)
	}
	if _, err := config.Parse([]byte("proxies:\n  - name: a\n    endpont: http://x\n")); err == nil || !strings.Contains(err.Error(), `proxies[0].endpont: unknown key (did you mean "proxies[0].endpoint"?)`) {
		t.Fatalf("misspelt key: %v", err)
	}
}

// TestConnectProxyCountsAsAuthentication: a node that authenticates
// through the connect proxy is not told that every connection will be
// refused, nor given generated keys.
func TestConnectProxyCountsAsAuthentication(t *testing.T) {
	cfg, err := config.Parse([]byte("proxies:\n  - name: app\n    endpoint: http://localhost:3000/connect\nclient:\n  proxy:\n    connect: app\nhttp_api:\n  key: k\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AuthUnconfigured() {
		t.Fatal("a connect proxy counts as configured authentication")
	}
	for _, w := range cfg.Warnings() {
		if strings.Contains(w, "every connection will be refused") {
			t.Fatalf("warning with a connect proxy: %s", w)
		}
	}
}
