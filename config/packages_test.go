package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestPackageOptionsCheckedOnce: the http_api and websocket options that
// package api, the WebSocket transport and its admission (transport/guard)
// check come back once each,
// under the key the file wrote, with the message in the file's terms
// (keys, not Go field names).
func TestPackageOptionsCheckedOnce(t *testing.T) {
	cfg := Default()
	cfg.HTTPAPI.ErrorMode = "http"
	cfg.HTTPAPI.MaxBodySize = -1
	cfg.HTTPAPI.BodyReadTimeout = -1
	cfg.HTTPAPI.MaxBatchCommands = -1
	cfg.HTTPAPI.MaxBatchResponseSize = -1
	cfg.WebSocket.CompressionLevel = 10
	cfg.WebSocket.CompressionMinSize = -1
	cfg.WebSocket.MaxUnauthenticated = -2
	cfg.WebSocket.MaxUnauthenticatedPerAddress = -2
	cfg.WebSocket.Rate = -0.5
	cfg.WebSocket.Burst = -1
	var ps Problems
	if err := cfg.Validate(); err != nil {
		ps = err.(Problems)
	}
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key)
		for _, goName := range []string{"ErrorMode", "MaxBodySize", "BodyReadTimeout", "MaxBatch", "Compression", "MaxUnauthenticated", "Rate", "Burst", "MaxMessageSize"} {
			if strings.Contains(p.Message, goName) {
				t.Errorf("%s: message %q names the Go field %s", p.Key, p.Message, goName)
			}
		}
	}
	slices.Sort(keys)
	want := []string{
		"http_api.body_read_timeout", "http_api.error_mode", "http_api.max_batch_commands",
		"http_api.max_batch_response_size", "http_api.max_body_size",
		"websocket.compression_level", "websocket.compression_min_size",
		"websocket.ip_rate_burst", "websocket.ip_rate_limit",
		"websocket.max_unauthenticated", "websocket.max_unauthenticated_per_address",
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("problems %v\nkeys %q, want each of %q once", ps, keys, want)
	}
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default: %v", err)
	}
}

// TestPackageConfigsConvertEveryOption fails when a field of api.Config
// that the file can set is not carried over by API (the server runs, and
// Validate checks, what it returns). websocket.Config and guard.Config
// need no such test: the websocket section embeds them.
func TestPackageConfigsConvertEveryOption(t *testing.T) {
	var cfg Config
	fillFields(t, reflect.ValueOf(&cfg.HTTPAPI).Elem())
	requireSetExcept(t, "api.Config", reflect.ValueOf(cfg.HTTPAPI.API()), "Logger", "TracerProvider")
	fillFields(t, reflect.ValueOf(&cfg.GRPCAPIConfig).Elem())
	// Insecure follows http_api.insecure when grpc_api.key is empty (its
	// own test below); TLS is loaded by the server from grpc_api.tls.
	requireSetExcept(t, "grpcapi.Config", reflect.ValueOf(cfg.GRPCAPI()), "Insecure", "TLS")
}

func requireSetExcept(t *testing.T, what string, v reflect.Value, except ...string) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if v.Field(i).IsZero() && !slices.Contains(except, name) {
			t.Errorf("%s.%s is not set from the configuration file: convert it in config/packages.go", what, name)
		}
	}
}
